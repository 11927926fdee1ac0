/**
 * What crosses the PostgreSQL bridge between the main thread
 * (`bridge.ts`) and its worker (`worker.ts`): requests, answers, failures,
 * the worker's own events and what it is started with.
 *
 * @module
 */

/** One statement of a batch. */
export interface WireStatement {
  sql: string;
  params: unknown[];
}

/** What the main thread asks for. */
export type WireRequest =
  | {
    op: "batch";
    statements: WireStatement[];
    noWait?: boolean;
    /** The batch belongs to a write, whose transaction may hold locks (see the module's notes). */
    locked?: boolean;
    /**
     * How long the server may take to answer, connecting aside; past it the
     * connection is taken for stalled, dropped, and the batch fails with
     * `STALLED` (a connection failure).
     */
    deadlineMs: number;
    /** The most the whole batch may take, connecting included (what the call has left). */
    capMs?: number;
  }
  | { op: "listen"; channel: string }
  | { op: "close" };

/** One statement's result: its rows and the number of rows it touched. */
export interface WireResult {
  rows: Record<string, unknown>[];
  count: number;
  /** True when some column holds bytes in their wire form. */
  binary?: boolean;
}

/** The answer to a request. */
export type WireResponse =
  | { ok: true; results: WireResult[] }
  | { ok: false; error: WireError };

/** A failure as it crosses the bridge. */
export interface WireError {
  /** SQLSTATE, or the client's code (`CONNECTION_CLOSED`, `ECONNREFUSED`, …). */
  code: string;
  message: string;
  /** True when the connection failed (nothing about the data is known to be wrong). */
  connection: boolean;
}

/** Messages the worker posts by itself. */
export type WorkerEvent =
  | { kind: "notify"; payload: string }
  | { kind: "listening" }
  | { kind: "listen-failed"; message: string }
  | { kind: "listener-stalled"; silentMs: number };

/** What a worker is started with. */
export interface WorkerInit {
  url: string;
  buffer: SharedArrayBuffer;
  connectTimeoutS: number;
  password?: string;
  /** Run-time parameters every connection sets at start-up (timeouts, keepalives). */
  session: Record<string, string>;
  /** Seconds of silence before the client's TCP keepalive probes start. */
  keepAliveS: number;
  /** How often the listener's liveness is checked (0: never). */
  probeEveryMs: number;
}
