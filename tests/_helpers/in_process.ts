/**
 * An MCP server and the SDK client joined in one process (the SDK's linked
 * in-memory transports), over a real bus on a real SQLite file: for tests of
 * tool contracts that need no process boundary.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Env } from "../../lib/config.ts";
import { type Profile, profile as builtIn } from "../../lib/mcp/profiles/mod.ts";
import { createServer, type ServerOptions } from "../../lib/mcp/server.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { loadConfig } from "../../lib/config.ts";
import { createLogger } from "../../lib/log.ts";
import { openRuntime } from "../../lib/runtime.ts";
import { handlerOver } from "../../lib/transports/http/node.ts";
import { openTestBus, openTestSearch, type TestBus } from "./bus.ts";
import { failureOf, okContent, type ToolCaller } from "./peer.ts";
import { storeLocation } from "./store.ts";

/** A connected client, its bus, and cleanup. */
export interface InProcess extends ToolCaller, AsyncDisposable {
  client: Client;
  bus: TestBus;
}

/** Serve `profile` on `dbPath` in this process and connect a client to it. */
export async function connectInProcess(
  dbPath: string,
  profile: string | Profile,
  options: { env?: Env; server?: ServerOptions; onClient?: (client: Client) => void } = {},
): Promise<InProcess> {
  const bus = openTestBus(dbPath, options.env ?? {});
  const search = openTestSearch(bus);
  const served = typeof profile === "string" ? builtIn(profile) : profile;
  const created = createServer(served, { bus, search }, options.server ?? {});
  const client = new Client({ name: "in-process-test", version: "1" });
  options.onClient?.(client); // before connecting: handlers for notifications sent at once
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await created.server.connect(serverSide);
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    await client.callTool({ name, arguments: args }) as CallToolResult;
  return {
    client,
    bus,
    call,
    async ok(name, args) {
      return okContent(name, await call(name, args));
    },
    async fail(name, args) {
      return failureOf(name, await call(name, args));
    },
    async [Symbol.asyncDispose]() {
      await client.close();
      await created.close();
      await search[Symbol.asyncDispose]();
      await bus[Symbol.asyncDispose]();
    },
  };
}

/** The HTTP server's handler on a loopback socket, in this process. */
export interface InProcessHttp extends AsyncDisposable {
  url: string;
  port: number;
}

/**
 * Serve what `agent-bus http` serves (its handler, guard and console, over
 * its own runtime) on a free loopback port in this process: real HTTP for
 * `fetch`, without starting a process.
 */
export function serveHttpInProcess(dbPath: string, env: Env = {}): InProcessHttp {
  const { config } = loadConfig({ ...env, AGENT_BUS_DB: storeLocation(dbPath) });
  const runtime = openRuntime(config, { log: createLogger("error") });
  const handler = handlerOver({ bus: runtime.bus, search: runtime.search }, {
    config,
    hostname: "127.0.0.1",
    checkAnswers: true,
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => handler.handle(request),
  );
  const { port } = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async [Symbol.asyncDispose]() {
      await handler.close();
      await server.shutdown();
      await runtime.close();
    },
  };
}
