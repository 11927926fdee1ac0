/**
 * Run a real `agent-bus http` process and talk to it with the MCP SDK's
 * `Client` over Streamable HTTP, or with plain requests.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { failureOf, inheritedEnv, okContent, serverCommand, type ToolCaller } from "./peer.ts";
import { storeLocation } from "./store.ts";

/** A running HTTP server process. */
export interface HttpServer extends AsyncDisposable {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  port: number;
  pid: number;
  stderr(): string;
  /** Send a signal and wait for the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/**
 * Start `agent-bus http --port 0` on `dbPath` (with `command` instead of
 * `deno run main.ts` when given) and wait until it listens.
 *
 * @returns the server; dispose it to stop the process
 */
export async function startHttpServer(
  options: {
    dbPath: string;
    env?: Record<string, string>;
    args?: string[];
    command?: string;
    /** Run the server on another "host": the command is prefixed with this (`ip netns exec …`). */
    prefix?: string[];
  },
): Promise<HttpServer> {
  const [command, ...args] = [
    ...(options.prefix ?? []),
    ...(options.command ? [options.command] : serverCommand(options.dbPath)),
  ];
  const child = new Deno.Command(command!, {
    args: [...args, "http", "--port", "0", ...(options.args ?? [])],
    env: { ...inheritedEnv(), AGENT_BUS_DB: storeLocation(options.dbPath), ...options.env },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  const { promise: listening, resolve, reject } = Promise.withResolvers<string>();
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      stderr += decoder.decode(chunk, { stream: true });
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1]!);
    }
    reject(new Error(`HTTP server exited before listening:\n${stderr}`));
  })();
  const timer = setTimeout(
    () => reject(new Error(`HTTP server did not listen in 20 s:\n${stderr}`)),
    20_000,
  );
  let url: string;
  try {
    url = await listening;
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  let stopped: Promise<Deno.CommandStatus> | undefined;
  const stop = (signal: Deno.Signal = "SIGTERM"): Promise<Deno.CommandStatus> => {
    if (!stopped) {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
      stopped = child.status;
    }
    return stopped;
  };
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid,
    stderr: () => stderr,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}

/** An MCP client connected over Streamable HTTP. */
export interface HttpClient extends ToolCaller, AsyncDisposable {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

/** Connect an SDK client to `url` (a full endpoint URL). */
export async function connectHttp(
  url: string,
  options: { headers?: Record<string, string> } = {},
): Promise<HttpClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers ?? {} },
  });
  const client = new Client({ name: "agent-bus-tests", version: "0.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    await client.callTool({ name, arguments: args }) as CallToolResult;
  const close = async () => {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  };
  return {
    client,
    transport,
    call,
    async ok(name, args) {
      return okContent(name, await call(name, args));
    },
    async fail(name, args) {
      return failureOf(name, await call(name, args));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** POST the curl shorthand `{"tool", "args"}` and return status and JSON body. */
export async function shorthand(
  url: string,
  tool: string,
  args: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ tool, args }),
  });
  return { status: response.status, body: await response.json() };
}

/**
 * Send one HTTP/1.1 request by hand and return its status: `fetch` will not
 * forge a `Host` header, which is what DNS-rebinding tests need.
 */
export async function rawStatus(
  port: number,
  request: {
    method: string;
    path: string;
    host: string;
    headers?: Record<string, string>;
    body?: string;
  },
): Promise<number> {
  const body = request.body ?? "";
  const headers = Object.entries({
    ...request.headers,
    "content-length": String(new TextEncoder().encode(body).length),
    connection: "close",
  }).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(
      `${request.method} ${request.path} HTTP/1.1\r\nHost: ${request.host}\r\n${headers}\r\n${body}`,
    ),
  );
  const reply = new TextDecoder().decode(await new Response(conn.readable).bytes());
  return Number(reply.split(" ")[1]);
}
