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

import type { Session, SessionState } from "../bus/session.ts";
import {
  type CallToolResult,
  ListToolsRequestSchema,
  type RequestHandlerExtra,
  type ServerNotification,
  type ServerRequest,
} from "./_sdk.ts";
import { z } from "zod";
import type { Bus } from "../bus/mod.ts";
import type { SearchEngine } from "../search/mod.ts";
import { PACKAGE_VERSION } from "../version.ts";
import type { FeatureContext, PushMode } from "./features/mod.ts";
import type { Profile } from "./profiles/mod.ts";
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
  /** A session carried on from elsewhere, and who is told its state as it changes (resident bus). */
  sessionState?: {
    restore?: SessionState | undefined;
    onChange?: ((state: SessionState) => void) | undefined;
  } | undefined;
}

/** A server and how to shut it down. */
export interface CreatedServer {
  server: ProtocolServer;
  /** Who this connection is, per topic. */
  session: Session;
  close(): Promise<void>;
}

/**
 * Create an MCP server exposing `profile`: its tools, and its features.
 *
 * @param profile which dialect to serve
 * @param deps the process's bus
 */
export function createServer(
  profile: Profile,
  deps: ServerDeps,
  options: ServerOptions = {},
): CreatedServer {
  const { bus } = deps;
  const runner = createToolRunner(profile, deps, options);
  const ctx: FeatureContext = {
    bus,
    agent: options.agent,
    push: options.push ?? "resources",
    endpoint: runner.session.endpoint,
  };
  const server = new ProtocolServer(
    { name: options.serverName ?? "agent-bus", version: PACKAGE_VERSION },
    {
      capabilities: Object.assign(
        { tools: { listChanged: false } },
        ...profile.features.map((feature) => feature.capabilities(ctx)),
      ),
      instructions: profile.instructions,
    },
  );
  const stops = profile.features.map((feature) => feature.attach(server, ctx));

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
    session: runner.session,
    async close() {
      for (const stop of stops) stop();
      await server.close();
    },
  };
}
