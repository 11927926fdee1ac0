/**
 * The main thread's side of the synchronous bridge to PostgreSQL.
 *
 * The bus runs every transaction as a synchronous function (see
 * `lib/store/mod.ts`: with one connection per process, an `await` inside a
 * transaction would let another request's statements in). PostgreSQL's
 * clients are asynchronous, so the connection lives in a worker
 * (`worker.ts`) and `call()` posts it a message (what wakes it) and blocks
 * this thread on `Atomics.wait` until the worker has answered — exactly what a SQLite statement does while it reads
 * the disk. A transaction's statements run back to back on one connection,
 * never interleaved with another request's.
 *
 * Every batch has a deadline: the worker gives up on a connection that does
 * not answer in time (a server or network that stalled without closing) and
 * fails the batch as a lost connection. A worker that does not answer at all
 * within that deadline and a margin is terminated and replaced, so a hung
 * connection never hangs the process for longer.
 *
 * @module
 */

import {
  ALIVE,
  bytesToWire,
  decodeFrame,
  encodeFrame,
  newBuffer,
  REQUEST_SEQ,
  RESPONSE_SEQ,
  rowsFromWire,
  slots,
  STATE,
} from "./frames.ts";
import type {
  WireError,
  WireRequest,
  WireResponse,
  WireResult,
  WireStatement,
  WorkerEvent,
  WorkerInit,
} from "./wire.ts";

import { callTimeLeft } from "../call_deadline.ts";

export type { WireError, WireResult, WireStatement } from "./wire.ts";

/** How long a new worker may take to load before it is given up. */
const STARTUP_MS = 15_000;
/** How much longer than a batch's deadline the worker itself may take to answer. */
const WORKER_MARGIN_MS = 2000;

/** Options of {@linkcode Bridge}. */
export interface BridgeOptions {
  url: string;
  /** Password from `.pgpass`, when the URL and `PGPASSWORD` have none. */
  password?: string;
  /** Seconds to wait for a connection. */
  connectTimeoutS: number;
  /** How long the server may take to answer a batch unless the call says otherwise. */
  deadlineMs: number;
  /** Run-time parameters every connection sets at start-up (timeouts, keepalives). */
  session: Record<string, string>;
  /** Seconds of silence before the client's TCP keepalive probes start. */
  keepAliveS: number;
  /** How often the LISTEN connection's liveness is checked. */
  probeEveryMs: number;
  /** Called on the event loop for every worker event (notifications). */
  onEvent: (event: WorkerEvent) => void;
}

/** A failure of a call, with the worker's classification. */
export class BridgeError extends Error {
  readonly code: string;
  readonly connection: boolean;
  constructor(error: WireError) {
    super(error.message);
    this.name = "BridgeError";
    this.code = error.code;
    this.connection = error.connection;
  }
}

/** One worker and its shared buffer. */
export class Bridge {
  readonly #options: BridgeOptions;
  #worker: Worker | undefined;
  #buffer: SharedArrayBuffer | undefined;
  #seq = 0;
  #channels: string[] = [];
  #startedAt = 0;
  #workerError: string | undefined;

  constructor(options: BridgeOptions) {
    this.#options = options;
  }

  /**
   * Run `statements` (pipelined, in order) and return their results.
   * `noWait` returns at once; an error surfaces with the next call.
   * `deadlineMs` (default: the bridge's) bounds the server's answer.
   * `locked`: the batch belongs to a write (its statements are prepared
   * before it takes locks; a later batch may fail with `UNPREPARED`).
   *
   * @throws {BridgeError} the first statement's failure, or `STALLED`
   */
  batch(
    statements: WireStatement[],
    options: { noWait?: boolean; deadlineMs?: number; locked?: boolean } = {},
  ): WireResult[] {
    const wire = statements.map((s) => ({ sql: s.sql, params: bytesToWire(s.params) }));
    // Within a call, nothing waits longer than the call's deadline leaves (connecting included).
    const left = callTimeLeft();
    if (left <= 0) {
      throw new BridgeError({
        code: "DEADLINE",
        message: "The call's deadline for the database passed",
        connection: false,
      });
    }
    const deadlineMs = Math.min(options.deadlineMs ?? this.#options.deadlineMs, left);
    const capMs = Number.isFinite(left) ? left : undefined;
    const response = this.#call(
      {
        op: "batch",
        statements: wire,
        noWait: options.noWait ?? false,
        locked: options.locked ?? false,
        deadlineMs,
        capMs,
      },
      Math.min(deadlineMs + this.#options.connectTimeoutS * 1000, capMs ?? Infinity) +
        WORKER_MARGIN_MS,
    );
    if (!response.ok) throw new BridgeError(response.error);
    for (const result of response.results) if (result.binary) rowsFromWire(result.rows);
    return response.results;
  }

  /**
   * Start listening on `channel`, once: the client listens again after every
   * reconnect by itself, and a replacement worker is told to.
   */
  listen(channel: string): void {
    if (this.#channels.includes(channel)) return;
    this.#channels.push(channel);
    this.#call({ op: "listen", channel });
  }

  /** Stop the worker and its connections. */
  close(): void {
    if (!this.#worker) return;
    try {
      this.#call({ op: "close" }, 2000);
    } catch {
      // replaced below anyway
    }
    this.#terminate();
  }

  #call(
    request: WireRequest,
    deadlineMs = this.#options.deadlineMs + WORKER_MARGIN_MS,
  ): WireResponse {
    const buffer = this.#ensureWorker();
    const state = slots(buffer);
    const seq = ++this.#seq;
    encodeFrame(buffer, request);
    Atomics.store(state, REQUEST_SEQ, seq);
    Atomics.store(state, STATE, 1);
    this.#worker!.postMessage(0);
    // The request waits `deadlineMs` from when the worker can take it: a worker still
    // loading has until STARTUP_MS to be ready, and then the request's own time.
    let loaded = Atomics.load(state, ALIVE) === 1;
    let deadline = performance.now() + deadlineMs;
    for (;;) {
      const answered = Atomics.load(state, RESPONSE_SEQ);
      if (answered === seq) return decodeFrame(buffer) as WireResponse;
      const now = performance.now();
      if (!loaded && Atomics.load(state, ALIVE) === 1) {
        loaded = true;
        deadline = Math.max(deadline, now + deadlineMs);
      }
      // A worker that never loads (a permission, a missing file) is given up early.
      const limit = loaded ? deadline : this.#startedAt + STARTUP_MS;
      if (now >= limit) break;
      Atomics.wait(state, RESPONSE_SEQ, answered, Math.min(limit - now, loaded ? Infinity : 50));
    }
    this.#terminate();
    throw new BridgeError({
      code: "TIMEOUT",
      message: loaded
        ? `The database did not answer within ${Math.round(deadlineMs / 1000)} s`
        : `The PostgreSQL client did not start${this.#workerError ? `: ${this.#workerError}` : ""}`,
      connection: true,
    });
  }

  #ensureWorker(): SharedArrayBuffer {
    if (this.#worker && this.#buffer) return this.#buffer;
    const buffer = newBuffer();
    const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
    worker.onmessage = (event: MessageEvent<WorkerEvent>) => this.#options.onEvent(event.data);
    worker.onerror = (event: ErrorEvent) => {
      // Seen once this thread runs again; the next start reports it.
      event.preventDefault();
      this.#workerError = event.message;
      if (this.#worker === worker) this.#terminate();
    };
    worker.postMessage(
      {
        url: this.#options.url,
        buffer,
        connectTimeoutS: this.#options.connectTimeoutS,
        session: this.#options.session,
        keepAliveS: this.#options.keepAliveS,
        probeEveryMs: this.#options.probeEveryMs,
        ...(this.#options.password === undefined ? {} : { password: this.#options.password }),
      } satisfies WorkerInit,
    );
    this.#worker = worker;
    this.#buffer = buffer;
    this.#seq = 0;
    this.#startedAt = performance.now();
    // A replaced worker listens again on the channels of the one before.
    for (const channel of this.#channels) this.#call({ op: "listen", channel });
    return buffer;
  }

  #terminate(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#buffer = undefined;
  }
}
