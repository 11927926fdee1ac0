/**
 * One helper to run real agent-bus server processes and talk to them with
 * the MCP SDK's `Client` over stdio, exactly as an agent's client does.
 *
 * The child runs `deno run` with the same narrow permissions the README
 * documents (env, and read/write on the database directory only). Its stderr
 * is collected and printed only when a test fails.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { fileURLToPath } from "node:url";
import { launchFor } from "../../lib/launch.ts";
import { storeLocation } from "./store.ts";

/** Absolute path of `main.ts`. */
export const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** Options of {@linkcode startPeer}. */
export interface PeerOptions {
  /** Database file; its directory is the only one the child may read or write. */
  dbPath: string;
  /** Extra environment for the child. */
  env?: Record<string, string>;
  /** Extra arguments after `main.ts`. */
  args?: string[];
  /** Run this program instead of `deno run main.ts` (a compiled binary). */
  command?: string;
  /** Run the server on another "host": the command is prefixed with this (`ip netns exec …`). */
  prefix?: string[];
  /**
   * Attach to the resident bus (starting it if none runs), as `install`
   * writes by default; false: serve in a process of its own (`--standalone`).
   * Unset: the suite's mode (`AGENT_BUS_STANDALONE`).
   */
  resident?: boolean;
  /** Called before connecting, to set handlers for notifications sent during the handshake. */
  onClient?: (client: Client) => void;
}

/** A running server process with a connected client. */
export interface Peer extends ToolCaller, AsyncDisposable {
  client: Client;
  pid: number;
  /** Call a tool and return the raw result (with cancellation, timeout and progress options). */
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<CallToolResult>;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
  /** Kill the process with a signal, without a clean shutdown. */
  kill(signal?: Deno.Signal): void;
  close(): Promise<void>;
}

/** Options for one call. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  resetTimeoutOnProgress?: boolean;
}

/** Anything tests call tools through: a server process, an in-process pair, an HTTP client. */
export interface ToolCaller {
  /** Call a tool and return the raw result. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Call a tool and return its structuredContent; throws when the result is an error. */
  ok(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Call a tool that must fail and return its error, unpacked. */
  fail(name: string, args?: Record<string, unknown>): Promise<ToolFailure>;
}

/** An error result, unpacked. */
export interface ToolFailure {
  code: string;
  message: string;
  structured: Record<string, unknown>;
  text: string;
}

/**
 * A resident bus a test started ends soon after its last session, not 10
 * minutes later (`scripts/test.ts` sets it for the whole run too, for the
 * processes tests start with their own environment).
 */
export const TEST_BUS_IDLE: Record<string, string> = { AGENT_BUS_RESIDENT_IDLE_MS: "5000" };

/**
 * True in the suite's run that starts every server in a process of its own
 * (`AGENT_BUS_STANDALONE=1`, `scripts/test.ts`). A test that names the mode
 * of every server it starts (`resident: true | false`) would only repeat
 * itself there, and may leave that run out.
 */
export const STANDALONE_RUN = Deno.env.get("AGENT_BUS_STANDALONE") === "1";

/** Environment a child needs from ours (the Deno cache, so it starts offline). */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1", ...TEST_BUS_IDLE };
  // The suite's mode: `AGENT_BUS_STANDALONE=1 deno task test` runs every server in its own process.
  for (const key of ["DENO_DIR", "HOME", "PATH", "XDG_CACHE_HOME", "AGENT_BUS_STANDALONE"]) {
    const value = Deno.env.get(key);
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/**
 * The command that runs a server on `dbPath` from source: what `agent-bus
 * install` writes into a client's config (the `serve` task's flags, narrowed
 * to the database, which is the test store's: a URL on the PostgreSQL
 * run), so the tests start servers exactly as clients do.
 */
export function serverCommand(dbPath: string): string[] {
  const launch = launchFor({
    execPath: Deno.execPath(),
    dbPath: storeLocation(dbPath),
    args: [],
    env: { HOME: Deno.env.get("HOME") },
  });
  return [launch.command, "--quiet", ...launch.args];
}

/**
 * Start a server process on `dbPath` and connect a client to it.
 *
 * @returns the connected peer; dispose it (or `close()`) to stop the process
 */
export async function startPeer(options: PeerOptions): Promise<Peer> {
  const [command, ...args] = [
    ...(options.prefix ?? []),
    ...(options.command ? [options.command] : serverCommand(options.dbPath)),
    ...(options.args ?? []),
  ];
  const transport = new StdioClientTransport({
    command: command!,
    args,
    env: {
      ...inheritedEnv(),
      AGENT_BUS_DB: storeLocation(options.dbPath),
      ...(options.resident === undefined
        ? {}
        : { AGENT_BUS_STANDALONE: options.resident ? "0" : "1" }),
      ...options.env,
    },
    stderr: "pipe",
  });
  let stderr = "";
  const decoder = new TextDecoder();
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    stderr += decoder.decode(chunk);
  });
  const client = new Client({ name: "agent-bus-tests", version: "0.0.0" });
  options.onClient?.(client);
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`Server failed to start: ${error}\n--- stderr ---\n${stderr}`);
  }
  const pid = transport.pid!;
  const call = async (
    name: string,
    args: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<CallToolResult> =>
    await client.callTool({ name, arguments: args }, undefined, {
      timeout: options.timeoutMs ?? 60_000,
      signal: options.signal,
      onprogress: options.onprogress,
      resetTimeoutOnProgress: options.resetTimeoutOnProgress,
    }) as CallToolResult;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await client.close().catch(() => {});
  };
  return {
    client,
    pid,
    call,
    async ok(name, args) {
      return okContent(name, await call(name, args), stderr);
    },
    async fail(name, args) {
      return failureOf(name, await call(name, args));
    },
    stderr: () => stderr,
    kill(signal = "SIGKILL") {
      try {
        Deno.kill(pid, signal);
      } catch {
        // already gone
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The structuredContent of a successful result; throws (with the server's stderr) on an error. */
export function okContent(
  name: string,
  result: CallToolResult,
  stderr = "",
): Record<string, unknown> {
  if (result.isError) {
    throw new Error(`${name} failed: ${textOf(result)}\n--- stderr ---\n${stderr}`);
  }
  return result.structuredContent as Record<string, unknown>;
}

/** An error result, unpacked; throws when the result is a success. */
export function failureOf(name: string, result: CallToolResult): ToolFailure {
  if (!result.isError) {
    throw new Error(`${name} succeeded but should have failed: ${textOf(result)}`);
  }
  const structured = result.structuredContent as Record<string, unknown>;
  const error = structured.error as { code: string; message: string };
  return { code: error.code, message: error.message, structured, text: textOf(result) };
}

/** The text content of a result. */
export function textOf(result: CallToolResult): string {
  return (result.content as { type: string; text?: string }[])
    .map((part) => part.type === "text" ? part.text ?? "" : "").join("\n");
}

/** Wait until `check` returns true, polling every `everyMs`, failing after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${options.what ?? "condition"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 10));
  }
}

/** A message as a test reads it back. */
export interface ReadMessage {
  message_id: string;
  content_markdown: string;
}

/** Everything `peer`'s agent has not read yet in `topicId`, through `sync`, 20 at a time. */
export async function readTopic(peer: ToolCaller, topicId: unknown): Promise<ReadMessage[]> {
  const messages: ReadMessage[] = [];
  for (;;) {
    const got = await peer.ok("sync", { topic_id: topicId, wait_seconds: 0, max_items: 20 });
    const received = got.received as ReadMessage[];
    if (received.length === 0) return messages;
    messages.push(...received);
  }
}
