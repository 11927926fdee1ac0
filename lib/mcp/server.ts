/**
 * `createServer()`: an MCP server for one client connection.
 *
 * Built on the SDK's protocol layer (see `protocol_server.ts`) rather than
 * `McpServer`, so that the `defineTool()` adapter, not the SDK, validates
 * arguments and shapes errors. Each server has its own `Session` (the agent names it holds);
 * the `Bus` (database connection, change feed) and the `SearchEngine` are
 * shared by every server of the process.
 *
 * @module
 */

import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Bus } from "../bus/mod.ts";
import type { SearchEngine } from "../search/mod.ts";
import { PACKAGE_VERSION } from "../version.ts";
import { attachChatResources, CHAT_CAPABILITIES } from "./chat_resources.ts";
import { attachMailboxPush, pushCapabilities, type PushMode } from "./mailbox_push.ts";
import { attachPrompts, PROMPT_CAPABILITIES } from "./prompts.ts";
import { attachTopicResources, TOPIC_CAPABILITIES } from "./topic_resources.ts";
import { profile, type ProfileName } from "./profiles.ts";
import { ProtocolServer } from "./protocol_server.ts";
import type { SessionRecord } from "../bus/attendance.ts";
import { createToolRunner } from "./tool_runner.ts";

/**
 * `tools/call` as this server accepts it. The SDK's own schema requires
 * `arguments` to be an object and answers anything else with a JSON-RPC
 * internal error and a raw schema dump; here any `arguments` reaches the
 * tool's `defineTool()` adapter, which refuses a non-object with
 * `INVALID_ARGUMENT` like every other bad argument.
 */
const CallToolRequestSchema = z.object({
  method: z.literal("tools/call"),
  params: z.looseObject({ name: z.string(), arguments: z.unknown().optional() }),
});

/** Dependencies of {@linkcode createServer}: the process's bus and search engine. */
export interface ServerDeps {
  bus: Bus;
  search: SearchEngine;
}

/** Per-connection choices of {@linkcode createServer}. */
export interface ServerOptions {
  /** The mail identity of this connection (mailbox and peer-bus profiles). */
  agent?: string | undefined;
  /** Overrides `serverInfo.name` (default `agent-bus`). */
  serverName?: string | undefined;
  /** Leave `bus.drain` out of the peer-bus tools. */
  noDrain?: boolean | undefined;
  /** How a mailbox or peer-bus server announces new mail (default `resources`). */
  push?: PushMode | undefined;
  /** The session's entry in the register the hooks read (stdio servers). */
  record?: SessionRecord | undefined;
  /** The URL of the MCP endpoint serving this connection (default `stdio`). */
  endpoint?: string | undefined;
}

/** A server and how to shut it down. */
export interface CreatedServer {
  server: ProtocolServer;
  close(): Promise<void>;
}

/**
 * Create an MCP server exposing the tools of `profileName`.
 *
 * @param profileName which tool set to expose
 * @param deps the process's bus
 */
export function createServer(
  profileName: ProfileName,
  deps: ServerDeps,
  options: ServerOptions = {},
): CreatedServer {
  const { bus } = deps;
  const { instructions } = profile(profileName);
  const hasMailbox = profileName === "peerbus" || profileName === "mailbox";
  const push = hasMailbox && options.agent ? options.push ?? "resources" : "none";
  const runner = createToolRunner(profileName, deps, options);
  const chat = profileName === "chatbus";
  const topics = profileName === "peer";
  const prompts = profileName === "peer" || profileName === "teacher" ? profileName : undefined;
  const server = new ProtocolServer(
    { name: options.serverName ?? "agent-bus", version: PACKAGE_VERSION },
    {
      capabilities: {
        tools: { listChanged: false },
        ...pushCapabilities(push),
        ...(chat ? CHAT_CAPABILITIES : {}),
        ...(topics ? TOPIC_CAPABILITIES : {}),
        ...(prompts ? PROMPT_CAPABILITIES : {}),
      },
      instructions,
    },
  );
  if (chat) attachChatResources(server, bus, runner.session.endpoint);
  const stopTopics = topics ? attachTopicResources(server, bus) : () => {};
  if (prompts) attachPrompts(server, bus, prompts);
  const stopPush = options.agent
    ? attachMailboxPush(server, { bus, agent: options.agent, mode: push })
    : () => {};

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: runner.tools.map((tool) => tool.descriptor),
  }));

  const callTool = async (
    request: z.output<typeof CallToolRequestSchema>,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const progressToken = extra._meta?.progressToken;
    return await runner.call(request.params.name, request.params.arguments, {
      signal: extra.signal,
      progress(progress, total, message) {
        if (progressToken === undefined) return;
        extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress, total, message },
        }).catch((error: unknown) => bus.log.debug("Progress notification failed", { error }));
      },
    });
  };
  server.setRequestHandler(CallToolRequestSchema, callTool);

  return {
    server,
    async close() {
      stopPush();
      stopTopics();
      await server.close();
    },
  };
}
