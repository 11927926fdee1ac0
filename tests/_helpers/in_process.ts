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
import type { ProfileName } from "../../lib/mcp/profiles.ts";
import { createServer, type ServerOptions } from "../../lib/mcp/server.ts";
import { openTestBus, openTestSearch, type TestBus } from "./bus.ts";

/** A connected client, its bus, and cleanup. */
export interface InProcess extends AsyncDisposable {
  client: Client;
  bus: TestBus;
}

/** Serve `profile` on `dbPath` in this process and connect a client to it. */
export async function connectInProcess(
  dbPath: string,
  profile: ProfileName,
  options: { env?: Env; server?: ServerOptions } = {},
): Promise<InProcess> {
  const bus = openTestBus(dbPath, options.env ?? {});
  const search = openTestSearch(bus);
  const created = createServer(profile, { bus, search }, options.server ?? {});
  const client = new Client({ name: "in-process-test", version: "1" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await created.server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    bus,
    async [Symbol.asyncDispose]() {
      await client.close();
      await created.close();
      await search[Symbol.asyncDispose]();
      await bus[Symbol.asyncDispose]();
    },
  };
}
