/**
 * The MCP sessions of the HTTP server: one transport and one server per
 * session, bound to the route that opened it, closed after a spell of
 * silence.
 *
 * @module
 */

import type { WebStandardStreamableHTTPServerTransport } from "../../mcp/_sdk_http.ts";
import type { LegacySseTransport } from "./legacy_sse.ts";

/** One open session. */
export interface SessionEntry {
  /** Streamable HTTP, or the older HTTP+SSE transport (`/sse`). */
  transport: WebStandardStreamableHTTPServerTransport | LegacySseTransport;
  /** Close the session's server and transport (safe to call twice). */
  close(): Promise<void>;
  /** `peer` or `agent:NAME`: a session answers only on the route that opened it. */
  route: string;
  lastSeen: number;
}

/** The open sessions, with idle expiry. */
export class SessionRegistry {
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #idleMs: number;
  readonly #sweeper: ReturnType<typeof setInterval>;

  constructor(options: { idleMs: number }) {
    this.#idleMs = options.idleMs;
    this.#sweeper = setInterval(
      () => this.sweep(),
      Math.min(60_000, Math.max(1000, this.#idleMs / 2)),
    );
    Deno.unrefTimer(this.#sweeper);
  }

  /** Number of open sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /** The session with this id, marked as used now. */
  touch(id: string): SessionEntry | undefined {
    const entry = this.#sessions.get(id);
    if (entry) entry.lastSeen = performance.now();
    return entry;
  }

  /** Remember a new session. */
  add(id: string, entry: SessionEntry): void {
    this.#sessions.set(id, entry);
  }

  /** Forget a session (its transport closed). */
  remove(id: string): void {
    this.#sessions.delete(id);
  }

  /** Close every session silent for longer than the idle limit. */
  sweep(): void {
    const cutoff = performance.now() - this.#idleMs;
    for (const [id, entry] of this.#sessions) {
      if (entry.lastSeen < cutoff) {
        this.#sessions.delete(id);
        void entry.close().catch(() => {});
      }
    }
  }

  /** Close everything (server shutdown). */
  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    const entries = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(entries.map((entry) => entry.close().catch(() => {})));
  }
}
