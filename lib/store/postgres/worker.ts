/**
 * The PostgreSQL side of the synchronous bridge: a worker that owns the
 * connections (`npm:postgres`) and answers one batch of statements at a time.
 *
 * The main thread writes a request into the shared buffer, posts this
 * worker an empty message and blocks on `Atomics.wait`; the message wakes
 * this worker, which runs the batch on its one query connection
 * (statements of a batch are pipelined: sent together, answered in order),
 * writes the answer and notifies. (Not `Atomics.waitAsync`: Deno settles
 * its promise only when V8's message loop is next pumped, which with
 * several such workers in one process (a resident bus on PostgreSQL) left
 * requests unseen for seconds; denoland/deno#15358.) Notifications
 * from `LISTEN` travel the other way as ordinary messages, so they reach the
 * main thread's event loop without any query being sent.
 *
 * A request whose `noWait` is set is answered at once and runs behind it on
 * the connection (a read's `COMMIT`); its error, if any, is reported with the
 * next request.
 *
 * A write's statements are prepared before its locks are taken. The client
 * prepares a statement with parameters, the first time it runs on a
 * connection, by asking the server to describe it (`Parse`, `Describe`,
 * `Flush`) and sends the rest (`Bind`, `Execute`, `Sync`) once the answer is
 * back. In between, the server waits for this client in the middle of a
 * statement, where neither `idle_in_transaction_session_timeout` (no `Sync`
 * has ended the exchange) nor a statement timeout (not acted on while
 * reading from the client) applies: a client that stalls there (a paused
 * host, a path that stalls without closing) would hold its transaction's
 * locks until its connection closed, and every writer behind them would
 * wait. So a batch of a write (`locked`) goes out only once all its
 * statements are prepared: what the write's first batch lacks is described
 * before its `BEGIN`; what a later batch lacks ends the transaction
 * (`ROLLBACK`), is described, and the batch fails with
 * {@linkcode UNPREPARED}, which the store retries from the start (once per
 * statement and connection).
 *
 * @module
 */

/// <reference lib="deno.worker" />

import postgres from "postgres";
import {
  ALIVE,
  bytesFromWire,
  decodeFrame,
  encodeFrame,
  REQUEST_SEQ,
  RESPONSE_SEQ,
  rowsToWire,
  slots,
  STATE,
  UNPREPARED,
} from "./frames.ts";

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

const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "25P03", // idle_in_transaction_session_timeout: the server closed the session
]);

/** Wakes the loop waiting for a request (each request's message calls it). */
let wake: (() => void) | undefined;

self.onmessage = (event: MessageEvent<WorkerInit>) => {
  self.onmessage = () => wake?.();
  serve(event.data).catch((error) => {
    // The loop itself never throws; if it does, the main thread's wait times out and it
    // replaces this worker.
    self.postMessage({ kind: "listen-failed", message: String(error) } satisfies WorkerEvent);
  });
};

/**
 * An IPv6 host (`postgres://…@[::1]:5432/…`) named as the client takes it:
 * its URL parser splits hosts at every `:`, so the host and port are given
 * apart, as lists.
 */
function ipv6Host(url: string): { host?: string; port?: number } {
  const { hostname, port } = new URL(url);
  if (!hostname.startsWith("[")) return {};
  // (The client takes lists at run time; its types name only single values.)
  return {
    host: [hostname.slice(1, -1)] as unknown as string,
    port: [Number(port || 5432)] as unknown as number,
  };
}

async function serve(init: WorkerInit): Promise<void> {
  const options = {
    max: 1,
    connect_timeout: init.connectTimeoutS,
    idle_timeout: 0,
    keep_alive: init.keepAliveS,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: "agent-bus", ...init.session },
    ...(init.password === undefined ? {} : { password: init.password }),
    ...ipv6Host(init.url),
    types: {
      // Integers, counts and sums as numbers, booleans as 0/1: rows look like SQLite's.
      int8: { to: 20, from: [20, 1700], serialize: String, parse: Number },
      bool: { to: 16, from: [16], serialize: String, parse: (x: string) => (x === "t" ? 1 : 0) },
    },
  };
  // The query connection is replaced after a connection failure: the client would otherwise
  // keep the next statements queued through its reconnect back-off (seconds), while a fresh
  // one fails at once when the server is down and connects at once when it is back.
  /** The statements prepared on `sql`'s connection, by {@linkcode signature}. */
  let prepared = new Set<string>();
  const open = () => {
    const mine = new Set<string>();
    prepared = mine;
    // (Each connection the client opens starts with nothing prepared.)
    return postgres(init.url, { ...options, onclose: () => mine.clear() });
  };
  let sql = open();
  /** Whether a batch has succeeded on `sql` (else a batch's deadline includes connecting). */
  let connected = false;
  const renew = () => {
    sql.end({ timeout: 0 }).catch(() => {});
    sql = open();
    connected = false;
  };
  const runBatch = async (request: WireRequest & { op: "batch" }) => {
    const { statements, deadlineMs, capMs = Infinity } = request;
    const limit = Math.min(deadlineMs + (connected ? 0 : init.connectTimeoutS * 1000), capMs);
    const known = prepared;
    const work = request.locked ? runLocked(sql, statements, known) : run(sql, statements);
    const response = await withDeadline(work, limit);
    if (response.ok) {
      connected = true;
      for (const statement of statements) {
        if (statement.params.length > 0) known.add(signature(statement));
      }
    } else if (response.error.connection) renew();
    return response;
  };
  const listener = new Listener(init, options);
  const state = slots(init.buffer);
  let deferredError: WireError | undefined;
  Atomics.store(state, ALIVE, 1);
  for (;;) {
    // A request is there, or its message comes (one that came early wakes a later wait: harmless).
    while (Atomics.load(state, STATE) === 0) {
      await new Promise<void>((resolve) => wake = resolve);
      wake = undefined;
    }
    const seq = Atomics.load(state, REQUEST_SEQ);
    const request = decodeFrame(init.buffer) as WireRequest;
    let response: WireResponse;
    if (request.op === "close") {
      answer(init.buffer, seq, { ok: true, results: [] });
      await Promise.allSettled([sql.end({ timeout: 1 }), listener.close()]);
      self.close();
      return;
    }
    if (request.op === "listen") {
      listener.add(request.channel);
      response = { ok: true, results: [] };
    } else if (deferredError) {
      response = { ok: false, error: deferredError };
      deferredError = undefined;
    } else if (request.noWait) {
      runBatch(request).then((r) => {
        if (!r.ok) deferredError = r.error;
      });
      response = { ok: true, results: [] };
    } else {
      response = await runBatch(request);
    }
    answer(init.buffer, seq, response);
  }
}

/**
 * Run a batch pipelined on the query connection; the first failure answers
 * for all. A lost connection answers at once: the client would hold the
 * batch's later statements through its reconnect back-off, one failed
 * connect each (seconds apart while the server is down).
 */
async function run(sql: postgres.Sql, statements: WireStatement[]): Promise<WireResponse> {
  const pending = statements.map((s) =>
    sql.unsafe(s.sql, params(sql, s.params), { prepare: true })
  );
  const lost = new Promise<WireResponse>((resolve) => {
    for (const statement of pending) {
      statement.catch((reason) => {
        const error = wireError(reason);
        if (error.connection) resolve({ ok: false, error });
      });
    }
  });
  return await Promise.race([lost, Promise.allSettled(pending).then(collect)]);
}

/**
 * Run a write's batch with every statement prepared first (see the
 * module's notes); `prepared` is what its connection has.
 */
async function runLocked(
  sql: postgres.Sql,
  statements: WireStatement[],
  prepared: Set<string>,
): Promise<WireResponse> {
  const fresh = statements.filter((s) => s.params.length > 0 && !prepared.has(signature(s)));
  if (fresh.length === 0) return await run(sql, statements);
  const opening = statements[0]!.sql === "BEGIN";
  if (!opening) {
    const ended = await run(sql, [{ sql: "ROLLBACK", params: [] }]);
    if (!ended.ok) return ended;
  }
  try {
    for (const statement of fresh) {
      await sql.unsafe(statement.sql, params(sql, statement.params), { prepare: true }).describe();
      prepared.add(signature(statement));
    }
  } catch (reason) {
    return { ok: false, error: wireError(reason) };
  }
  if (opening) return await run(sql, statements);
  return {
    ok: false,
    error: {
      code: UNPREPARED,
      message: "a statement new to the connection was prepared; run the write again",
      connection: false,
    },
  };
}

/**
 * What the client keys a prepared statement by: its text and its
 * parameters' types as {@linkcode param} gives them.
 */
function signature(statement: WireStatement): string {
  return `${statement.params.map(paramType).join(",")} ${statement.sql}`;
}

/** The answer to a batch whose statements all settled. */
function collect(settled: PromiseSettledResult<unknown>[]): WireResponse {
  const results: WireResult[] = [];
  for (const outcome of settled) {
    if (outcome.status === "rejected") return { ok: false, error: wireError(outcome.reason) };
    const list = outcome.value as unknown as Record<string, unknown>[] & { count: number };
    const rows = [...list];
    const binary = rowsToWire(rows);
    results.push({ rows, count: list.count ?? rows.length, ...(binary ? { binary } : {}) });
  }
  return { ok: true, results };
}

/**
 * A statement parameter. Numbers carry their type (`int8` for integers,
 * `float8` otherwise): left to inference, `? - 1` would make a parameter an
 * integer that a fractional timestamp then fails to parse as.
 */
function param(sql: postgres.Sql, value: unknown): unknown {
  if (typeof value === "number") return sql.typed(value, paramType(value));
  return bytesFromWire(value);
}

/** A statement's parameters as the client takes them (see {@linkcode param}). */
function params(sql: postgres.Sql, values: unknown[]): postgres.ParameterOrJSON<never>[] {
  return values.map((value) => param(sql, value)) as postgres.ParameterOrJSON<never>[];
}

/**
 * The type the client sends for `value` as {@linkcode param} passes it
 * (0: the server infers it), which keys its prepared statements with the text.
 */
function paramType(value: unknown): number {
  if (typeof value === "number") return Number.isSafeInteger(value) ? 20 : 701;
  const passed = bytesFromWire(value);
  if (passed instanceof Uint8Array) return 17;
  if (typeof passed === "boolean") return 16;
  return typeof passed === "bigint" ? 20 : 0;
}

/**
 * `work`'s answer, or a `STALLED` connection failure once `ms` pass without
 * one (a server or network that stopped answering without closing).
 */
async function withDeadline(work: Promise<WireResponse>, ms: number): Promise<WireResponse> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<WireResponse>((resolve) => {
    timer = setTimeout(() =>
      resolve({
        ok: false,
        error: {
          code: "STALLED",
          message: `the database did not answer within ${(ms / 1000).toFixed(1)} s`,
          connection: true,
        },
      }), ms);
  });
  try {
    return await Promise.race([work, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The LISTEN connection, checked for liveness: every `probeEveryMs` it
 * notifies itself on a channel of its own, and when that notification has
 * not come back by the next check (a connection that stalled without
 * closing: a paused VM, a dropped route), it is replaced and the main thread
 * told, so every waiter re-reads what it may have missed.
 */
class Listener {
  readonly #init: WorkerInit;
  readonly #options: postgres.Options<Record<string, postgres.PostgresType>>;
  readonly #channels: string[] = [];
  readonly #probeChannel = `agent_bus_probe_${crypto.randomUUID().replaceAll("-", "")}`;
  #sql: postgres.Sql;
  #sent = 0;
  #heard = 0;
  #heardAt = performance.now();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(init: WorkerInit, options: postgres.Options<Record<string, postgres.PostgresType>>) {
    this.#init = init;
    this.#options = options;
    this.#sql = postgres(init.url, options);
  }

  /** Listen on `channel` (again after every reconnect, by the client). */
  add(channel: string): void {
    this.#channels.push(channel);
    this.#listen(channel);
    if (this.#timer === undefined && this.#init.probeEveryMs > 0) {
      this.#listenForProbes();
      this.#timer = setInterval(() => this.#probe(), this.#init.probeEveryMs);
    }
  }

  close(): Promise<void> {
    clearInterval(this.#timer);
    return this.#sql.end({ timeout: 1 });
  }

  #listen(channel: string): void {
    this.#sql.listen(
      channel,
      (payload) => self.postMessage({ kind: "notify", payload } satisfies WorkerEvent),
      () => self.postMessage({ kind: "listening" } satisfies WorkerEvent),
    ).catch((error) => {
      self.postMessage({ kind: "listen-failed", message: String(error) } satisfies WorkerEvent);
    });
  }

  #listenForProbes(): void {
    this.#sql.listen(this.#probeChannel, (payload) => {
      this.#heard = Math.max(this.#heard, Number(payload));
      this.#heardAt = performance.now();
    }).catch(() => {}); // a failed LISTEN shows as probes never heard
  }

  #probe(): void {
    if (this.#heard < this.#sent) {
      const silentMs = Math.round(performance.now() - this.#heardAt);
      self.postMessage({ kind: "listener-stalled", silentMs } satisfies WorkerEvent);
      this.#sql.end({ timeout: 0 }).catch(() => {});
      this.#sql = postgres(this.#init.url, this.#options);
      this.#sent = this.#heard = 0;
      this.#heardAt = performance.now();
      this.#listenForProbes();
      for (const channel of this.#channels) this.#listen(channel);
      return;
    }
    this.#sent++;
    this.#sql.notify(this.#probeChannel, String(this.#sent)).catch(() => {});
  }
}

function answer(buffer: SharedArrayBuffer, seq: number, response: WireResponse): void {
  try {
    encodeFrame(buffer, response);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    encodeFrame(buffer, {
      ok: false,
      error: { code: "FRAME_TOO_LARGE", message, connection: false },
    });
  }
  const state = slots(buffer);
  Atomics.store(state, RESPONSE_SEQ, seq);
  Atomics.store(state, STATE, 0);
  Atomics.notify(state, RESPONSE_SEQ);
}

function wireError(error: unknown): WireError {
  const code = String((error as { code?: unknown })?.code ?? "UNKNOWN");
  const message = error instanceof Error ? error.message : String(error);
  return { code, message, connection: CONNECTION_CODES.has(code) || code.startsWith("08") };
}
