/**
 * `openNode()`: what serves an HTTP node's requests — the runtime (store,
 * bus, search engine) and the request handler over it. On SQLite the node's
 * one thread opens it; on PostgreSQL each session worker opens its own
 * (`node_worker.ts`).
 *
 * @module
 */

import type { ConfigWarning, ResolvedConfig } from "../../config.ts";
import type { Logger } from "../../log.ts";
import type { ServerDeps } from "../../mcp/server.ts";
import type { Profile } from "../../mcp/profiles/mod.ts";
import { openRuntime } from "../../runtime.ts";
import { maxMessageBytes } from "../limits.ts";
import { guardPolicy } from "./guard.ts";
import {
  createHttpHandler,
  type HttpHandler,
  type HttpHandlerOptions,
  type SessionObserver,
} from "./handler.ts";

/** What {@linkcode openNode} needs. */
export interface NodeOptions {
  config: ResolvedConfig;
  log: Logger;
  /** The address the node binds (the Host/Origin guard accepts it). */
  hostname: string;
  /** What `/mcp` serves (default the peer profile). */
  atMcp?: Profile;
  /** Run the background indexer (one thread per node does). */
  indexing: boolean;
  /** Logged as the runtime opens (by one thread per node). */
  configWarnings?: ConfigWarning[];
  observer?: SessionObserver;
}

/** What serves a node's requests: its one thread's handler, or its session workers. */
export interface Serving {
  handle(request: Request): Promise<Response>;
  /** MCP sessions open. */
  readonly sessions: number;
  /** Close every session (open event streams would hold a graceful shutdown forever). */
  closeSessions(): Promise<void>;
  /** Close the rest (after the server stopped listening). */
  close(): Promise<void>;
}

/** A node's handler and its runtime. */
export interface Node extends Serving {
  handler: HttpHandler;
}

/** Open the runtime and the handler over it. */
export function openNode(options: NodeOptions): Node {
  const { config, log } = options;
  const runtime = openRuntime(config, {
    log,
    indexing: options.indexing,
    configWarnings: options.configWarnings,
  });
  const handler = handlerOver({ bus: runtime.bus, search: runtime.search }, options);
  return Object.assign(servingOf(handler, () => runtime.close()), { handler });
}

/** What serves with `handler` alone; closing it closes the handler, then runs `after`. */
export function servingOf(handler: HttpHandler, after?: () => Promise<void>): Serving {
  return {
    handle: (request) => handler.handle(request),
    get sessions() {
      return handler.sessions;
    },
    closeSessions: () => handler.close(),
    async close() {
      await handler.close();
      await after?.();
    },
  };
}

/**
 * The request handler of a node bound to `options.hostname`, over a
 * runtime opened elsewhere (a node's own, a resident bus's, a test's).
 */
export function handlerOver(
  deps: ServerDeps,
  options:
    & Pick<NodeOptions, "config" | "hostname" | "atMcp" | "observer">
    & Pick<HttpHandlerOptions, "checkAnswers">,
): HttpHandler {
  const { config } = options;
  return createHttpHandler({
    deps,
    policy: guardPolicy(options.hostname, config.http),
    maxBodyBytes: maxMessageBytes(config),
    sessionIdleMs: config.http.sessionIdleSeconds * 1000,
    jsonResponse: config.http.jsonResponse,
    atMcp: options.atMcp,
    observer: options.observer,
    checkAnswers: options.checkAnswers,
  });
}
