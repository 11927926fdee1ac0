/**
 * The worker's query connection (`npm:postgres`), and how a batch runs on
 * it: pipelined, within a deadline, and, for a write, with every statement
 * prepared before the write's locks are taken.
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

import postgres from "postgres";
import { bytesFromWire, rowsToWire, UNPREPARED } from "./frames.ts";
import type {
  WireError,
  WireRequest,
  WireResponse,
  WireResult,
  WireStatement,
  WorkerInit,
} from "./wire.ts";

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

/** The client's options for `init`'s connections. */
export function clientOptions(init: WorkerInit) {
  return {
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
}

/**
 * The query connection, and what is prepared on it. It is replaced after a
 * connection failure: the client would otherwise keep the next statements
 * queued through its reconnect back-off (seconds), while a fresh one fails
 * at once when the server is down and connects at once when it is back.
 */
export class QueryConnection {
  readonly #init: WorkerInit;
  readonly #options: ReturnType<typeof clientOptions>;
  #sql: postgres.Sql;
  /** The statements prepared on the connection, by {@linkcode signature}. */
  #prepared = new Set<string>();
  /** Whether a batch has succeeded on it (else a batch's deadline includes connecting). */
  #connected = false;

  constructor(init: WorkerInit, options: ReturnType<typeof clientOptions>) {
    this.#init = init;
    this.#options = options;
    this.#sql = this.#open();
  }

  /** Run one batch request within its deadline. */
  async run(request: WireRequest & { op: "batch" }): Promise<WireResponse> {
    const { statements, deadlineMs, capMs = Infinity } = request;
    const connecting = this.#connected ? 0 : this.#init.connectTimeoutS * 1000;
    const known = this.#prepared;
    const work = request.locked
      ? runLocked(this.#sql, statements, known)
      : run(this.#sql, statements);
    const response = await withDeadline(work, Math.min(deadlineMs + connecting, capMs));
    if (response.ok) {
      this.#connected = true;
      for (const statement of statements) {
        if (statement.params.length > 0) known.add(signature(statement));
      }
    } else if (response.error.connection) {
      this.#sql.end({ timeout: 0 }).catch(() => {});
      this.#sql = this.#open();
      this.#connected = false;
    }
    return response;
  }

  /** Close the connection (a second to finish what runs). */
  async close(): Promise<void> {
    await this.#sql.end({ timeout: 1 });
  }

  #open(): postgres.Sql {
    const prepared = new Set<string>();
    this.#prepared = prepared;
    // (Each connection the client opens starts with nothing prepared.)
    return postgres(this.#init.url, { ...this.#options, onclose: () => prepared.clear() });
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

/** A failure of the client as it crosses the bridge. */
export function wireError(error: unknown): WireError {
  const code = String((error as { code?: unknown })?.code ?? "UNKNOWN");
  const message = error instanceof Error ? error.message : String(error);
  return { code, message, connection: CONNECTION_CODES.has(code) || code.startsWith("08") };
}
