/**
 * `serveHttp()`: the HTTP server (`agent-bus http`).
 *
 * One process serves every agent's mailbox and the peer tools over MCP
 * Streamable HTTP (see `handler.ts` for the routes). It binds 127.0.0.1 by
 * default and refuses to bind any other address without a bearer token.
 * It runs until SIGINT or SIGTERM (or `signal`), then closes every session,
 * stops listening and closes the database. On SQLite one thread serves
 * everything; on PostgreSQL the sessions are spread over workers with
 * connections of their own (`node_pool.ts`), so a stalled database call
 * holds only its own worker.
 *
 * @module
 */

import { type ConfigWarning, DEFAULTS, redactUrl, type ResolvedConfig } from "../../config.ts";
import { BusError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import { isPostgresUrl } from "../../runtime.ts";
import { isLoopback } from "./guard.ts";
import { openNode, type Serving } from "./node.ts";
import { NodePool } from "./node_pool.ts";
import { type Profile, profile, profileNamed } from "../../mcp/profiles/mod.ts";
import { onShutdownSignal } from "../../signals.ts";

/** Options of {@linkcode serveHttp}. */
export interface HttpOptions {
  config: ResolvedConfig;
  configWarnings: ConfigWarning[];
  log: Logger;
  /** Address to bind (default 127.0.0.1). */
  hostname?: string;
  /** Port (default 8765; 0 picks a free one). */
  port?: number;
  /** Called once listening, with the base URL. */
  onListen?: (url: string) => void;
  /** Stops the server when aborted (besides SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** What `/mcp` serves (default the peer profile). */
  atMcp?: Profile;
}

/**
 * Serve HTTP until a signal arrives.
 *
 * @throws {BusError} `INVALID_ARGUMENT` when asked to bind a non-loopback address without a token
 */
export async function serveHttp(options: HttpOptions): Promise<void> {
  const { config, log } = options;
  const hostname = options.hostname ?? "127.0.0.1";
  if (!isLoopback(hostname) && config.http.token === undefined) {
    throw new BusError(
      "INVALID_ARGUMENT",
      `Refusing to listen on ${hostname} without a token: set AGENT_BUS_HTTP_TOKEN (clients then send ` +
        `"Authorization: Bearer <token>"), or bind 127.0.0.1`,
    );
  }
  // On PostgreSQL the sessions run in workers (`node_pool.ts`). (A profile not in
  // the list, a test's, cannot be named to a worker: it is served here.)
  const atMcp = options.atMcp ?? profile("peer");
  const serving: Serving = isPostgresUrl(config.dbPath) && profileNamed(atMcp.name) === atMcp
    ? await NodePool.open({ config, configWarnings: options.configWarnings, log, hostname, atMcp })
    : openNode({
      config,
      log,
      hostname,
      atMcp,
      indexing: true,
      configWarnings: options.configWarnings,
    });

  const stopper = new AbortController();
  const stop = () => stopper.abort();
  options.signal?.addEventListener("abort", stop);
  const stopListening = onShutdownSignal(stop);
  try {
    const server = Deno.serve({
      hostname,
      port: options.port ?? DEFAULTS.httpPort,
      onListen(address) {
        const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
        const url = `http://${host}:${address.port}`;
        log.info("agent-bus http server ready", { url, db: redactUrl(config.dbPath) });
        options.onListen?.(url);
      },
    }, (request) => serving.handle(request));
    await new Promise<void>((resolve) => {
      if (stopper.signal.aborted) resolve();
      stopper.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    // Open SSE streams would hold a graceful shutdown forever: end the sessions first.
    await serving.closeSessions();
    await server.shutdown();
  } finally {
    stopListening();
    options.signal?.removeEventListener("abort", stop);
    await serving.close();
  }
}
