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
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { Bus } from "../bus/mod.ts";
import type { SearchEngine } from "../search/mod.ts";
import { Session } from "../bus/session.ts";
import { BusError } from "../errors.ts";
import { PACKAGE_VERSION } from "../version.ts";
import { type BoundTool, errorResult, type ToolContext } from "./define_tool.ts";
import { profile, type ProfileName } from "./profiles.ts";
import { ProtocolServer } from "./protocol_server.ts";

/** Dependencies of {@linkcode createServer}: the process's bus and search engine. */
export interface ServerDeps {
  bus: Bus;
  search: SearchEngine;
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
export function createServer(profileName: ProfileName, deps: ServerDeps): CreatedServer {
  const { bus, search } = deps;
  const { tools, instructions } = profile(profileName);
  const bound = new Map<string, BoundTool>(
    tools.map((tool) => [tool.name, tool.bind(bus.config)]),
  );
  const session = new Session();
  const server = new ProtocolServer(
    { name: "agent-bus", version: PACKAGE_VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...bound.values()].map((tool) => tool.descriptor),
  }));

  const callTool = async (
    request: CallToolRequest,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> => {
    const name = request.params.name;
    const tool = bound.get(name);
    if (!tool) {
      return errorResult(
        new BusError(
          "INVALID_ARGUMENT",
          `Unknown tool "${name}"; available: ${[...bound.keys()].join(", ")}`,
        ),
        name,
        bus.log,
      );
    }
    const progressToken = extra._meta?.progressToken;
    const ctx: ToolContext = {
      bus,
      search,
      session,
      log: bus.log,
      signal: extra.signal,
      progress(progress, total, message) {
        if (progressToken === undefined) return;
        extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress, total, message },
        }).catch((error: unknown) => bus.log.debug("Progress notification failed", { error }));
      },
    };
    return await tool.call(request.params.arguments, ctx);
  };
  server.setRequestHandler(CallToolRequestSchema, callTool);

  return {
    server,
    async close() {
      await server.close();
    },
  };
}
