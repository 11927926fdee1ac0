/**
 * REST calls for tests of the console's and AgentChatBus's routes: a JSON
 * request and its answer, and an in-process HTTP server on a fresh
 * database.
 *
 * @module
 */

import { serveHttpInProcess } from "./in_process.ts";
import { tmpDir } from "./tmp.ts";

type Json = Record<string, unknown>;

/** Send `body` (as JSON, when given) to `url`; the status and the parsed answer. */
export async function call(
  url: string,
  method = "GET",
  body?: unknown,
  headers: Json = {},
): Promise<{ status: number; body: ReturnType<JSON["parse"]> }> {
  const response = await fetch(url, {
    method,
    headers: body === undefined
      ? (headers as Record<string, string>)
      : { "content-type": "application/json", ...(headers as Record<string, string>) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** An HTTP server in this process on a fresh database, and the database's path. */
export async function restServer() {
  const dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  const server = serveHttpInProcess(dbPath);
  return {
    dbPath,
    url: server.url,
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}
