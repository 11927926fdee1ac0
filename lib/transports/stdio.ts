/**
 * `serveStdio()`: the stdio MCP server, one per agent process.
 *
 * Serves one MCP session (`stdio_session.ts`) on stdin/stdout until the
 * client closes stdin or a signal arrives, then shuts it down in order.
 *
 * On PostgreSQL the session runs in a worker (`stdio_worker.ts`) and this
 * thread keeps the transport only: a call that waits for the database
 * blocks the worker's thread (the store is synchronous, see
 * `lib/store/mod.ts`), and this one goes on answering `ping` and, once the
 * session has listed its tools, `tools/list`. So a client never takes a
 * server whose database stalled for a dead one. On SQLite the session runs
 * here: its waits are on the local disk, and a worker's hop would only cost.
 *
 * @module
 */

import type { JSONRPCMessage } from "../mcp/_sdk.ts";
import { redactUrl } from "../config.ts";
import type { Logger } from "../log.ts";
import { profileNamed } from "../mcp/profiles/mod.ts";
import { isPostgresUrl } from "../runtime.ts";
import { localAnswer } from "./local_answers.ts";
import { toolListOf } from "../mcp/tool_runner.ts";
import { maxMessageBytes } from "./limits.ts";
import { openStdioSession, type StdioSession, type StdioSessionOptions } from "./stdio_session.ts";
import { StdioTransport } from "./stdio_transport.ts";
import type { FromWorker, ToWorker } from "./worker_port.ts";
import { onShutdownSignal } from "../signals.ts";

/** Options of {@linkcode serveStdio}. */
export interface StdioOptions extends StdioSessionOptions {
  log: Logger;
}

/**
 * Serve MCP on stdio until the client goes away.
 *
 * @returns when the server has shut down
 */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const { log, ...sessionOptions } = options;
  const { config } = sessionOptions;
  const transport = new StdioTransport({ maxLineBytes: maxMessageBytes(config) });
  // (A profile not in the list, a test's, cannot be named to a worker: it runs here.)
  const inWorker = isPostgresUrl(config.dbPath) &&
    profileNamed(sessionOptions.profile.name) === sessionOptions.profile;
  const session = inWorker
    ? await openSessionWorker(transport, sessionOptions, log)
    : await openStdioSession(transport, sessionOptions, log);

  const stopListening = onShutdownSignal(() => void session.stop());
  if (Deno.stdin.isTerminal()) {
    // A person ran this by hand: say what it is instead of sitting there silently.
    log.warn(
      `MCP server on stdio, database ${redactUrl(config.dbPath)}. It is meant to be started ` +
        `by an MCP client (see the README); press Ctrl-C to stop`,
    );
  }
  await session.closed;
  stopListening();
}

/**
 * Run the session in a worker and relay its messages, answering `ping` and
 * `tools/list` here (`local_answers.ts`).
 */
async function openSessionWorker(
  transport: StdioTransport,
  options: StdioSessionOptions,
  log: Logger,
): Promise<StdioSession> {
  const worker = new Worker(new URL("./stdio_worker.ts", import.meta.url), { type: "module" });
  const post = (message: ToWorker) => worker.postMessage(message);
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  // (Known without the session: a stalled database never delays it.)
  const tools = toolListOf(options.profile, options.config, { noDrain: options.noDrain });
  worker.onmessage = (event: MessageEvent<FromWorker>) => {
    const data = event.data;
    if (data.kind === "closed") {
      worker.terminate();
      resolve();
      return;
    }
    void transport.send(data.message);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    log.error("The session worker failed", { error: event.message });
    worker.terminate();
    resolve();
  };
  transport.onmessage = (message: JSONRPCMessage) => {
    const answer = localAnswer(message, tools);
    if (answer !== undefined) {
      void transport.send(answer);
      return;
    }
    post({ kind: "message", message });
  };
  let stopping = false;
  const stop = (): Promise<void> => {
    if (!stopping) {
      stopping = true;
      post({ kind: "stop" });
    }
    return closed;
  };
  transport.onclose = () => void stop();
  post({ kind: "start", options: { ...options, profile: options.profile.name } });
  await transport.start();
  return { stop, closed };
}
