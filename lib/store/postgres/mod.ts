/**
 * The PostgreSQL engine of the store: one bus shared by agent-bus processes
 * on any number of hosts.
 *
 * Same shape as the SQLite engine (`../sqlite.ts`): synchronous transaction
 * functions over one connection per process, statements written in SQLite's
 * dialect and translated once (`dialect.ts`), prepared and reused.
 *
 * - **Writers take turns per topic**: a write that concerns only some topics
 *   locks those topics and runs beside writers of other topics; every other
 *   write takes the bus lock exclusively, as SQLite's `BEGIN IMMEDIATE` does
 *   on one machine (`locks.ts` says what is locked and in which order). Every
 *   rule the bus checks inside a transaction (gap-free per-topic seqs,
 *   idempotent `client_message_id`, exactly-once mailbox pops, name
 *   reservations) holds across hosts, and no two writers can wait for each
 *   other in a circle. `BEGIN`, the locks and the first statement travel in
 *   one round trip.
 * - **Reads** run in a `REPEATABLE READ READ ONLY` transaction (one
 *   snapshot), begun with their first statement and committed without
 *   waiting.
 * - **Wake-ups**: a write transaction that changed something ends with
 *   `pg_notify`, naming the topics the write said it alone changed; each
 *   process LISTENs on one connection and bumps its `dataVersion` (and calls
 *   subscribers with those topics) when another process commits, and after
 *   every reconnect of the listener (a wake-up may have been missed while it
 *   was down, so everyone re-reads). An idle process sends nothing.
 * - **Failures**: a transaction whose connection is found dead before
 *   `COMMIT` runs once more on a fresh connection (a server restart, an idle
 *   connection cut by a firewall); a connection lost during `COMMIT` is a
 *   `DB_UNAVAILABLE` saying the outcome is unknown. For the first
 *   {@linkcode OUTAGE_GRACE_MS} of an outage (a server restart takes one or
 *   two seconds) writes and tool calls wait and retry; after that every
 *   access fails fast with `DB_UNAVAILABLE`, and at most once a second one
 *   tries to connect again. A lock held longer than the busy timeout is
 *   `DB_BUSY`, as on SQLite.
 * - **Stalls** (a host or network that stops answering without closing the
 *   connection): every connection sets {@linkcode sessionSettings} — the
 *   server rolls back a transaction left idle for 4 s and drops a client
 *   whose TCP stops acknowledging — so a vanished host's locks are freed
 *   within seconds; and this process gives up on a batch the server has not
 *   answered within {@linkcode STALL_MS} (plus any lock wait), failing the
 *   call with `DB_UNAVAILABLE`.
 *
 * @module
 */

import { redactUrl } from "../../config.ts";
import { BusError } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { MigrationState } from "../migrate.ts";
import type {
  ChangedTopics,
  DeclaredScope,
  Query,
  SqlValue,
  Statement,
  Store,
  StoreOptions,
  WriteOptions,
} from "../types.ts";
import { Bridge, BridgeError, type WireResult, type WireStatement } from "./bridge.ts";
import { toPostgres } from "./dialect.ts";
import { UNPREPARED } from "./frames.ts";
import {
  COMMIT_LOCK_STATEMENT,
  lockStatements,
  type StatementScope,
  statementScope,
  WRITE_LOCK,
} from "./locks.ts";
import { pgpassPassword } from "./pgpass.ts";
import { atMost, callTimeLeft, DEADLINE_MARGIN_MS } from "../call_deadline.ts";
import { MIGRATIONS_TABLE, PG_MIGRATIONS, PG_VERSION } from "./schema.ts";

/**
 * Most topics a commit's notification names (their ids, after the sender's
 * instance, space-separated); a commit touching more wakes every waiter.
 */
const MAX_NOTIFIED_TOPICS = 16;

/**
 * Errors of a scoped write that running it again under the bus lock resolves:
 * a deadlock, and a unique key two topics' writers both took.
 */
const CONFLICTS: ReadonlySet<string> = new Set(["40P01", "23505"]);

/** Failures of a server that did not answer at all (not one that refused or dropped us). */
const SILENT_CODES: ReadonlySet<string> = new Set([
  "TIMEOUT",
  "STALLED",
  "CONNECT_TIMEOUT",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** The channel every process of a bus listens on. */
export const CHANNEL = "agent_bus";
const RETRY_CONNECT_MS = 1000;
const CONNECT_TIMEOUT_S = 5;
/** How long the server may take to answer a batch (beyond a lock wait) before the connection is dropped. */
export const STALL_MS = 5000;
/** Longest a statement may run on the server (below {@linkcode STALL_MS}, so the server's error comes first). */
const STATEMENT_TIMEOUT_MS = 4000;
/**
 * How long the server keeps a write's lock request queued before the
 * client asks again (until the write's whole wait, the busy timeout, is
 * spent). A request stays in the server's queue even when its client has
 * stopped answering, and holds back every request behind it; and a lock it
 * is granted is held until the server gives up on the idle transaction
 * (`idle_in_transaction_session_timeout`, 4 s). Queued a slice at a time,
 * a stalled host leaves no request behind for longer than this, so the
 * others wait at most one such hold (and a slice), never a chain of them.
 * Below {@linkcode STALL_MS}: a commit lock not granted in time is the
 * server's error, not a connection taken for stalled.
 */
const LOCK_SLICE_MS = 1000;
/**
 * How many times a write runs again for statements new to its connection
 * (`UNPREPARED`: each time, the worker has prepared at least one more).
 */
const MAX_UNPREPARED = 32;
/** How long a call tries to reach a server that did not answer last time. */
const SILENT_PROBE_MS = 2000;
/** How long an outage is waited out (retrying) before calls fail fast. */
export const OUTAGE_GRACE_MS = 5000;
const OUTAGE_RETRY_MS = 150;
/** How long migrations, `db wipe` and `VACUUM` may take. */
const MAINTENANCE_MS = 600_000;

/**
 * Run-time parameters every connection of agent-bus sets at start-up, so a
 * host that vanishes mid-transaction (killed, link down, paused) cannot hold
 * the bus: the server rolls back a transaction idle for 4 s, cancels a
 * statement running 4 s (a write's lock wait gets its own limit), and drops
 * a client that stops acknowledging (`tcp_user_timeout`) or answering
 * keepalive probes (2 s idle, then 1 s apart, 2 lost). Needs PostgreSQL 12
 * or later.
 */
export function sessionSettings(busyTimeoutMs: number): Record<string, string> {
  return {
    idle_in_transaction_session_timeout: "4000",
    statement_timeout: String(STATEMENT_TIMEOUT_MS),
    lock_timeout: String(Math.max(1, Math.round(busyTimeoutMs))),
    tcp_user_timeout: "4000",
    tcp_keepalives_idle: "2",
    tcp_keepalives_interval: "1",
    tcp_keepalives_count: "2",
  };
}

/** A PostgreSQL database as this process's store. */
export class PostgresStore implements Store {
  readonly engine = "postgres";
  readonly path: string;
  readonly replacedAt = undefined;
  readonly #log: Logger;
  readonly #busyTimeoutMs: number;
  readonly #bridge: Bridge;
  readonly #statements = new Map<string, PgStatement>();
  readonly #listeners = new Set<(topics: ChangedTopics) => void>();
  readonly #instance = crypto.randomUUID();
  /**
   * Statements of the open transaction not sent yet: its `BEGIN`, and writes
   * whose result nobody has asked for. They travel with the next statement
   * whose rows are needed, or with `COMMIT`.
   */
  #queue: Queued[] = [];
  /** Whether the open transaction's `BEGIN` has gone out. */
  #began = false;
  #inTransaction = false;
  #wrote = false;
  /** Whether the open write is scoped to topics (see `locks.ts`), and whether it took the commit lock. */
  #scoped = false;
  #commitLocked = false;
  /** The open write's notification payload and the topics it names (undefined outside a write). */
  #commit: { payload: string; topics: ChangedTopics } | undefined;
  /** Whether the open write's `COMMIT` has been sent (it may be sent by {@linkcode finish}), and answered. */
  #committing = false;
  #committed = false;
  #version = 0;
  #ready = false;
  #failure: BusError | undefined;
  #retryAt = 0;
  #closed = false;
  /** When the current outage was first seen (undefined while the server answers). */
  #outageSince: number | undefined;
  /** The outage is of a server that does not answer at all (no waiting it out). */
  #silent = false;
  /** The deadline of the next batch sent, when it waits for the write lock. */
  #lockWaitMs = 0;
  #listening = false;
  /** When the `LISTEN` connection was lost (warned once per outage), while it is. */
  #listenerLostAt: number | undefined;
  #roundTrips = 0;
  #probes = new Map<string, () => void>();

  /** Use {@linkcode openPostgresStore}. */
  constructor(url: string, options: StoreOptions) {
    this.path = redactUrl(url);
    this.#log = options.log;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#bridge = new Bridge({
      url,
      password: pgpassPassword(url),
      connectTimeoutS: CONNECT_TIMEOUT_S,
      deadlineMs: STALL_MS,
      session: sessionSettings(options.busyTimeoutMs),
      keepAliveS: 2,
      probeEveryMs: 2000,
      onEvent: (event) => {
        if (event.kind === "notify" && this.#probes.has(event.payload)) {
          this.#probes.get(event.payload)!();
          return;
        }
        if (event.kind === "notify") {
          const [from, ...topics] = event.payload.split(" ");
          if (from !== this.#instance) this.#changed(topics.length > 0 ? topics : undefined);
          return;
        }
        if (event.kind === "listen-failed" || event.kind === "listener-stalled") {
          this.#listenerLost(
            event.kind === "listen-failed" ? event.message : `silent for ${event.silentMs} ms`,
          );
          return;
        }
        this.#listening = true;
        if (this.#listenerLostAt !== undefined) {
          this.#log.warn("Hearing other processes' commits again", {
            after_ms: Math.round(performance.now() - this.#listenerLostAt),
          });
          this.#listenerLostAt = undefined;
        }
        this.#changed();
      },
    });
  }

  check(): BusError | undefined {
    try {
      this.#ensureReady();
      return undefined;
    } catch (error) {
      const failure = this.#toBusError(error);
      return failure instanceof BusError ? failure : new BusError(
        "DB_UNAVAILABLE",
        `Cannot use the PostgreSQL database at ${this.path}: ${failure}`,
        { cause: failure },
      );
    }
  }

  stmt(sql: string, scope?: DeclaredScope): PgStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = new PgStatement(this, toPostgres(sql), scope);
      this.#statements.set(sql, statement);
    } else if (statement.declared !== scope) {
      throw new TypeError(`One statement declared with two scopes: ${sql}`);
    }
    return statement;
  }

  gather(queries: readonly Query[]): Record<string, unknown>[][] {
    return this.#batch(queries, () => this.#flush());
  }

  /** Queue `queries`, let `send` send them, and return each one's rows. */
  #batch(queries: readonly Query[], send: () => void): Record<string, unknown>[][] {
    const pending = queries.map((query) => {
      const statement = this.stmt(query.sql, query.scope);
      return { statement, entry: statement.queue(query.params) };
    });
    send();
    return pending.map(({ statement, entry }) => statement.rowsOf(entry));
  }

  /** Batches sent to the server so far: its round trips (for tests and benchmarks). */
  get roundTrips(): number {
    return this.#roundTrips;
  }

  async ready(): Promise<BusError | undefined> {
    for (;;) {
      const failure = this.check();
      if (!failure || !this.#inGrace()) return failure;
      await this.#pause();
    }
  }

  /** Wait a moment in an outage's grace (the call's deadline counts it). */
  async #pause(): Promise<void> {
    await sleep(OUTAGE_RETRY_MS);
  }

  async immediate<T>(fn: () => T, options: WriteOptions = {}): Promise<T> {
    for (;;) {
      try {
        return this.#write(fn, options.waitMs ?? this.#busyTimeoutMs, options.topics);
      } catch (error) {
        // Nothing was stored (a commit whose outcome is unknown says so): wait out a restart.
        const unsent = error instanceof BusError && error.code === "DB_UNAVAILABLE" &&
          error.context?.outcome !== "unknown";
        if (!unsent || !this.#inGrace()) throw error;
        await this.#pause();
      }
    }
  }

  /**
   * Whether an outage began so recently that calls should wait it out: a
   * server that refused or dropped us is probably restarting; one that did
   * not answer at all is not waited for (each try would wait as long again),
   * nor past the call's deadline.
   */
  #inGrace(): boolean {
    return this.#outageSince !== undefined && !this.#silent &&
      performance.now() - this.#outageSince < OUTAGE_GRACE_MS && !this.#closed &&
      callTimeLeft() > OUTAGE_RETRY_MS;
  }

  /** {@linkcode PostgresStore.immediate}, synchronously: the bridge blocks, nothing awaits. */
  #write<T>(fn: () => T, waitMs: number, topics: ChangedTopics): T {
    const scoped = topics !== undefined && topics.length <= MAX_NOTIFIED_TOPICS;
    let lockScope = scoped ? topics : undefined;
    const waitUntil = performance.now() + waitMs;
    let unprepared = 0;
    for (let attempt = 0;; attempt++) {
      this.#ensureReady();
      try {
        // The server waits for a lock one slice at a time (see LOCK_SLICE_MS).
        const lockMs = Math.max(
          1,
          Math.round(Math.min(LOCK_SLICE_MS, waitUntil - performance.now())),
        );
        this.#lockWaitMs = lockMs;
        this.#scoped = lockScope !== undefined;
        this.#commit = scoped
          ? { payload: [this.#instance, ...topics].join(" "), topics }
          : { payload: this.#instance, topics: undefined };
        const result = this.#transaction(
          [
            { sql: "BEGIN", params: [] },
            { sql: `SET LOCAL lock_timeout = ${lockMs}`, params: [] },
            { sql: `SET LOCAL statement_timeout = ${lockMs + STATEMENT_TIMEOUT_MS}`, params: [] },
            ...lockStatements(lockScope),
          ],
          fn,
        );
        if (!this.#committed && (this.#began || this.#wrote)) this.#sendCommit();
        this.#queue = []; // (nothing ran: nothing to commit)
        return result;
      } catch (error) {
        const committing = this.#committing;
        this.#rollback();
        // A lock not granted within its slice: nothing was stored; queue again while the wait lasts.
        if (
          error instanceof BridgeError && error.code === "55P03" &&
          waitUntil - performance.now() >= 1
        ) {
          continue;
        }
        // A statement new to the connection, met while the locks were held: the worker ended
        // the transaction and prepared it (see worker.ts); once more, from the start.
        if (
          error instanceof BridgeError && error.code === UNPREPARED &&
          ++unprepared <= MAX_UNPREPARED
        ) {
          continue;
        }
        const lost = error instanceof BridgeError && error.connection;
        // A connection found dead before COMMIT: nothing was stored; once more on a fresh one.
        if (lost && !committing && attempt === 0) continue;
        // A conflict the topic locks do not cover (a unique key across topics): once more,
        // under the bus lock, where the transaction's reads see it and decide accordingly.
        if (lockScope !== undefined && error instanceof BridgeError && CONFLICTS.has(error.code)) {
          lockScope = undefined;
          continue;
        }
        if (lost && committing) {
          this.#ready = false;
          throw new BusError(
            "DB_UNAVAILABLE",
            "The connection to the database was lost while this write committed; it may or " +
              "may not have been stored. Read before retrying (a retry with the same " +
              "client_message_id is stored at most once)",
            { cause: error, context: { outcome: "unknown" } },
          );
        }
        throw this.#toBusError(error);
      } finally {
        this.#inTransaction = false;
        this.#scoped = false;
        this.#commit = undefined;
        this.#lockWaitMs = 0;
      }
    }
  }

  /** Send what is queued with the write's notification and `COMMIT`. */
  #sendCommit(): void {
    const commit = this.#commit!;
    this.#committing = true;
    // (A write scoped to no topic is one nobody waits for: it wakes nobody.)
    const heard = this.#wrote && commit.topics?.length !== 0;
    if (heard) this.#enqueue("SELECT pg_notify($1, $2)", [CHANNEL, commit.payload]);
    this.#enqueue("COMMIT", []);
    this.#flush();
    this.#committed = true;
    if (heard) queueMicrotask(() => this.#changed(commit.topics));
  }

  finish(queries: readonly Query[]): Record<string, unknown>[][] {
    if (this.#commit === undefined) return this.gather(queries); // (a read: it ends by itself)
    return this.#batch(queries, () => this.#sendCommit());
  }

  read<T>(fn: () => T): T {
    if (this.#inTransaction) return fn(); // a read inside a write sees the write's own state
    for (let attempt = 0;; attempt++) {
      this.#ensureReady();
      try {
        const result = this.#transaction(
          [{ sql: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", params: [] }],
          fn,
        );
        if (this.#began) this.#bridge.batch([{ sql: "COMMIT", params: [] }], { noWait: true });
        this.#queue = [];
        return result;
      } catch (error) {
        this.#rollback();
        // One more try on a fresh connection when the old one was found dead.
        if (attempt === 0 && error instanceof BridgeError && error.connection) continue;
        throw this.#toBusError(error);
      } finally {
        this.#inTransaction = false;
      }
    }
  }

  dataVersion(): number {
    return this.#version;
  }

  subscribe(listener: (topics: ChangedTopics) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  vacuum(): void {
    this.#ensureReady();
    try {
      this.#bridge.batch([
        { sql: "SET statement_timeout = 0", params: [] },
        { sql: "VACUUM (ANALYZE)", params: [] },
        { sql: "RESET statement_timeout", params: [] },
      ], { deadlineMs: MAINTENANCE_MS });
    } catch (error) {
      throw this.#toBusError(error);
    }
  }

  close(): void {
    this.#closed = true;
    this.#failure = new BusError("DB_UNAVAILABLE", "The database is closed");
    this.#retryAt = Infinity;
    this.#bridge.close();
  }

  /**
   * Which of our migrations the database still needs (applying nothing).
   * For `db migrate` and `doctor`.
   */
  migrationState(): MigrationState {
    try {
      const current = this.#schemaLevel();
      return {
        kind: current === 0 ? "empty" : "ours",
        current,
        target: PG_VERSION,
        pending: PG_MIGRATIONS.filter((m) => m.version > current).map((m) => ({
          version: m.version,
          description: m.description,
        })),
      };
    } catch (error) {
      throw this.check() ?? this.#toBusError(error);
    }
  }

  /**
   * What `doctor` reports: the server's version, our migration level, and
   * how long a notification took to come back through LISTEN (undefined when
   * it did not within `timeoutMs`).
   *
   * @throws {BusError} `DB_UNAVAILABLE` when the server cannot be reached
   */
  async probe(timeoutMs = 3000): Promise<PostgresProbe> {
    const failure = this.check();
    if (failure) throw failure;
    const wanted = Object.keys(sessionSettings(this.#busyTimeoutMs));
    const [row, shown] = this.#bridge.batch([
      {
        sql: "SELECT current_setting('server_version') AS v, " +
          "inet_server_addr() IS NOT NULL AS tcp",
        params: [],
      },
      {
        sql: "SELECT name, setting FROM pg_settings WHERE name = ANY($1)",
        params: [`{${wanted.join(",")}}`],
      },
    ]);
    const migration = this.migrationState();
    const deadline = Date.now() + timeoutMs;
    while (!this.#listening && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const token = `probe-${crypto.randomUUID()}`;
    const started = performance.now();
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      this.#probes.set(token, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    this.#bridge.batch([{ sql: "SELECT pg_notify($1, $2)", params: [CHANNEL, token] }]);
    const ok = await heard;
    this.#probes.delete(token);
    return {
      version: String(row!.rows[0]!.v),
      migration,
      listenMs: ok ? performance.now() - started : undefined,
      settings: Object.fromEntries(shown!.rows.map((r) => [String(r.name), String(r.setting)])),
      viaTcp: row!.rows[0]!.tcp === 1,
    };
  }

  /**
   * Drop every table and function of ours (the rest of the database is left
   * alone). For `db wipe`.
   *
   * @returns the names of the tables dropped
   */
  wipe(): string[] {
    const tables = PG_MIGRATIONS.flatMap((m) => [...m.sql.matchAll(/CREATE TABLE (\w+)/g)])
      .map((match) => match[1]!);
    const functions = PG_MIGRATIONS.flatMap((m) => [...m.sql.matchAll(/CREATE FUNCTION (\w+)/g)])
      .map((match) => match[1]!);
    try {
      const [found] = this.#bridge.batch([{
        sql:
          "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)",
        params: [`{${[...tables, "bus_schema_migrations"].join(",")}}`],
      }]);
      const existing = found!.rows.map((row) => String(row.tablename));
      this.#bridge.batch([
        { sql: "BEGIN", params: [] },
        { sql: `SET LOCAL statement_timeout = ${MAINTENANCE_MS}`, params: [] },
        { sql: `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, params: [] },
        ...existing.map((table) => ({ sql: `DROP TABLE IF EXISTS ${table} CASCADE`, params: [] })),
        ...functions.map((fn) => ({ sql: `DROP FUNCTION IF EXISTS ${fn}() CASCADE`, params: [] })),
        { sql: "DROP TEXT SEARCH CONFIGURATION IF EXISTS bus_english", params: [] },
        { sql: "DROP TEXT SEARCH DICTIONARY IF EXISTS bus_stem", params: [] },
        { sql: "COMMIT", params: [] },
      ], { deadlineMs: MAINTENANCE_MS });
      this.#ready = false;
      return existing;
    } catch (error) {
      this.#rollback();
      throw this.#toBusError(error);
    }
  }

  /**
   * Queue one statement of a transaction; it is sent with the next
   * statement whose rows are needed, or the commit. Its result is on the
   * entry after that ({@linkcode PgStatement.run} flushes when asked for it).
   */
  defer(sql: string, params: SqlValue[], scope: StatementScope): Queued {
    if (!this.#inTransaction) {
      throw new Error("A statement ran outside store.read() or store.immediate()");
    }
    if (this.#committed) throw new Error("A statement ran after store.finish()");
    if (scope !== "read") this.#wrote = true;
    if (scope === "bus" && this.#scoped && !this.#commitLocked) {
      this.#commitLocked = true;
      this.#queue.push({ statement: COMMIT_LOCK_STATEMENT });
    }
    return this.#enqueue(sql, params);
  }

  /** Send what is queued, if anything. */
  flush(): void {
    this.#flush();
  }

  #enqueue(sql: string, params: unknown[]): Queued {
    const entry: Queued = { statement: { sql, params } };
    this.#queue.push(entry);
    return entry;
  }

  #flush(): void {
    const queued = this.#queue;
    if (queued.length === 0) return;
    this.#queue = [];
    this.#began = true;
    // The first batch of a write waits for the write lock as well.
    const deadlineMs = STALL_MS + this.#lockWaitMs;
    this.#lockWaitMs = 0;
    this.#roundTrips++;
    const results = this.#bridge.batch(queued.map((q) => q.statement), {
      deadlineMs,
      locked: this.#commit !== undefined,
    });
    queued.forEach((q, i) => q.result = results[i]);
  }

  #transaction<T>(begin: WireStatement[], fn: () => T): T {
    this.#inTransaction = true;
    this.#wrote = false;
    this.#commitLocked = false;
    this.#committing = false;
    this.#committed = false;
    this.#began = false;
    this.#queue = begin.map((statement) => ({ statement }));
    return fn();
  }

  #rollback(): void {
    const began = this.#began;
    this.#queue = [];
    this.#began = false;
    if (!began) return;
    try {
      this.#bridge.batch([{ sql: "ROLLBACK", params: [] }]);
    } catch {
      // The connection is gone, and the transaction with it.
    }
  }

  /** Connect and bring the schema up to date, once; fail fast while the server is down. */
  #ensureReady(): void {
    if (this.#ready) return;
    const now = performance.now();
    if (this.#failure && now < this.#retryAt) throw this.#failure;
    try {
      // A server that did not answer last time gets a short try: a call does not wait for it.
      if (this.#silent) atMost(SILENT_PROBE_MS, () => this.#migrate());
      else this.#migrate();
      this.#bridge.listen(CHANNEL);
      this.#ready = true;
      if (this.#failure) this.#log.warn("The database is usable again", { url: this.path });
      this.#failure = undefined;
      this.#outageSince = undefined;
      this.#silent = false;
    } catch (error) {
      const mapped = this.#toBusError(error);
      const failure = mapped instanceof BusError ? mapped : new BusError(
        "DB_UNAVAILABLE",
        `Cannot prepare the PostgreSQL database at ${this.path}: ${
          mapped instanceof Error ? mapped.message : mapped
        }`,
        { cause: mapped },
      );
      if (failure.message !== this.#failure?.message) {
        this.#log.warn(failure.message, { url: this.path });
      }
      this.#failure = failure;
      this.#outageSince ??= now;
      this.#retryAt = now + (this.#inGrace() ? OUTAGE_RETRY_MS : RETRY_CONNECT_MS);
      throw failure;
    }
  }

  /** Apply the migrations this database lacks, under the write lock. */
  #migrate(): void {
    // The fast path only reads. Any change happens under the write lock and re-reads the level
    // first: processes opening a new database at the same instant must not both create it
    // (concurrent CREATE TABLE IF NOT EXISTS can fail on PostgreSQL's catalog).
    if (this.#schemaLevel() >= PG_VERSION) return;
    const maintenance = { deadlineMs: MAINTENANCE_MS };
    this.#bridge.batch([
      { sql: "BEGIN", params: [] },
      { sql: `SET LOCAL statement_timeout = ${MAINTENANCE_MS}`, params: [] },
      { sql: `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, params: [] },
      { sql: MIGRATIONS_TABLE, params: [] },
    ], maintenance);
    try {
      const current = this.#schemaLevel();
      for (const migration of PG_MIGRATIONS) {
        if (migration.version <= current) continue;
        this.#bridge.batch([
          { sql: migration.sql, params: [] },
          {
            // (No parameters: a statement with some is described in a round trip of its
            // own, which would hold the write lock across the network; see worker.ts.)
            sql: "INSERT INTO bus_schema_migrations (version, description, applied_at) VALUES (" +
              `${migration.version}, ${sqlText(migration.description)}, ${Date.now() / 1000})`,
            params: [],
          },
        ], maintenance);
      }
      this.#bridge.batch([{ sql: "COMMIT", params: [] }]);
    } catch (error) {
      try {
        this.#bridge.batch([{ sql: "ROLLBACK", params: [] }]);
      } catch {
        // gone with the connection
      }
      throw error;
    }
  }

  /** The highest migration applied (0 for a database without our tables); reads only. */
  #schemaLevel(): number {
    const [present] = this.#bridge.batch([{
      sql: "SELECT to_regclass('bus_schema_migrations') IS NOT NULL AS present",
      params: [],
    }]);
    if (!present!.rows[0]!.present) return 0;
    const [row] = this.#bridge.batch([
      { sql: "SELECT COALESCE(MAX(version), 0) AS v FROM bus_schema_migrations", params: [] },
    ]);
    return Number(row!.rows[0]!.v);
  }

  /** The `LISTEN` connection failed or stalled: say so once per outage (it reconnects by itself). */
  #listenerLost(reason: string): void {
    if (this.#listenerLostAt !== undefined) {
      this.#log.debug("Still cannot listen for other processes' commits", { reason });
      return;
    }
    this.#listenerLostAt = performance.now();
    this.#log.warn(
      "Lost the connection that hears other processes' commits; reconnecting until it is back",
      { reason },
    );
  }

  #changed(topics?: ChangedTopics): void {
    this.#version++;
    for (const listener of [...this.#listeners]) listener(topics);
  }

  /** Map a failure to the wire error a client can act on; other errors pass unchanged. */
  #toBusError(error: unknown): unknown {
    if (error instanceof BusError) return error;
    if (this.#closed) return new BusError("DB_UNAVAILABLE", "The database is closed");
    if (error instanceof BridgeError) {
      if (error.code === "DEADLINE") {
        return new BusError(
          "DB_UNAVAILABLE",
          `The database did not answer within this call's deadline (${
            Math.round((this.#busyTimeoutMs + DEADLINE_MARGIN_MS) / 1000)
          } s); retry the call`,
          { cause: error },
        );
      }
      if (error.connection) {
        this.#ready = false;
        this.#outageSince ??= performance.now();
        if (SILENT_CODES.has(error.code)) this.#silent = true;
        return new BusError(
          "DB_UNAVAILABLE",
          `Cannot reach the PostgreSQL database at ${this.path}: ${error.message}. ` +
            `Check that the server runs and AGENT_BUS_DB is right; agent-bus reconnects by itself`,
          { cause: error },
        );
      }
      if (error.code === "55P03") {
        return new BusError(
          "DB_BUSY",
          "The database is busy (another process holds the bus's write lock); retry the call",
          { cause: error },
        );
      }
      if (error.code === "57014") {
        return new BusError(
          "DB_BUSY",
          "The database took too long to answer (statement_timeout); retry the call",
          { cause: error },
        );
      }
      if (error.code === "28P01" || error.code === "28000" || error.code === "3D000") {
        return new BusError(
          "DB_UNAVAILABLE",
          `Cannot use the PostgreSQL database at ${this.path}: ${error.message}`,
          { cause: error },
        );
      }
    }
    return error;
  }
}

/** What `doctor` learns from a PostgreSQL server (see {@linkcode PostgresStore.probe}). */
export interface PostgresProbe {
  version: string;
  migration: MigrationState;
  /** How long a NOTIFY took to come back through LISTEN (undefined: it did not). */
  listenMs: number | undefined;
  /** The session's values of {@linkcode sessionSettings}' parameters, as the server reports them. */
  settings: Record<string, string>;
  /** Whether the connection is TCP (keepalives and `tcp_user_timeout` apply) rather than a Unix socket. */
  viaTcp: boolean;
}

/** `text` as an SQL string literal (standard-conforming strings: only `'` is doubled). */
function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A statement waiting in a transaction's queue, and its result once sent. */
export interface Queued {
  statement: WireStatement;
  result?: WireResult | undefined;
}

/**
 * A statement of {@linkcode PostgresStore}: its text translated once.
 *
 * The PostgreSQL tables have a real `rowid` column where SQLite has a hidden
 * one, so `SELECT *` would return it too; rows lose it unless the statement
 * asks for it by name (`… AS rowid`), as SQLite's would.
 */
class PgStatement implements Statement {
  readonly #store: PostgresStore;
  readonly #sql: string;
  /** The scope its writer declared ({@linkcode Store.stmt}). */
  readonly declared: DeclaredScope | undefined;
  readonly #scope: StatementScope;
  readonly #hideRowid: boolean;
  /** Whether a parameter is a JSON list (`json_each(?)` in SQLite's words). */
  readonly #jsonLists: boolean;

  constructor(store: PostgresStore, sql: string, declared: DeclaredScope | undefined) {
    this.#store = store;
    this.#sql = sql;
    this.declared = declared;
    this.#scope = statementScope(sql, declared);
    this.#hideRowid = !/\browid AS rowid\b/i.test(sql);
    this.#jsonLists = sql.includes("json_array_elements_text");
  }

  /**
   * Queue the statement; it is sent with the next one whose rows are needed
   * (or the commit), saving a round trip per write. Reading `changes` sends
   * it now.
   */
  run(...params: SqlValue[]): { changes: number } {
    const entry = this.#store.defer(this.#sql, this.#storable(params), this.#scope);
    const store = this.#store;
    return {
      get changes(): number {
        if (!entry.result) store.flush();
        return entry.result!.count;
      },
    };
  }

  get<Row extends object = Record<string, unknown>>(...params: SqlValue[]): Row | undefined {
    return this.all<Row>(...params)[0];
  }

  all<Row extends object = Record<string, unknown>>(...params: SqlValue[]): Row[] {
    const entry = this.queue(params);
    this.#store.flush();
    return this.rowsOf(entry) as Row[];
  }

  /** Queue the statement with `params` (see {@linkcode PostgresStore.gather}). */
  queue(params: SqlValue[]): Queued {
    return this.#store.defer(this.#sql, this.#storable(params), this.#scope);
  }

  /**
   * `params` as PostgreSQL takes them. Its text cannot hold NUL (U+0000),
   * which SQLite stores and any input may carry: a write of such text is
   * refused as a bad argument (nothing is stored); in a read, where it could
   * match nothing stored, it stands as U+FFFF (a noncharacter), so a lookup
   * of an id with a NUL in it finds nothing, as on SQLite, instead of
   * failing the statement. JSON lists of ids carry it escaped: the same there.
   */
  #storable(params: SqlValue[]): SqlValue[] {
    const escaped = this.#jsonLists ? "\\u0000" : "\0";
    if (!params.some((p) => typeof p === "string" && (p.includes("\0") || p.includes(escaped)))) {
      return params;
    }
    if (this.#scope !== "read") {
      if (params.some((p) => typeof p === "string" && p.includes("\0"))) {
        throw new BusError(
          "INVALID_ARGUMENT",
          "The text holds a NUL character (U+0000), which a bus on PostgreSQL cannot store; " +
            "nothing was stored. Leave it out",
        );
      }
      return params;
    }
    return params.map((p) =>
      typeof p === "string" ? p.replaceAll("\0", "\uffff").replaceAll(escaped, "\\uffff") : p
    );
  }

  /** The rows of a queued run of this statement, once sent. */
  rowsOf(entry: Queued): Record<string, unknown>[] {
    const { rows } = entry.result!;
    if (this.#hideRowid && rows.length > 0 && "rowid" in rows[0]!) {
      for (const row of rows) delete row.rowid;
    }
    return rows;
  }
}

/**
 * Open the PostgreSQL database at `url` (connecting lazily on first use,
 * like the SQLite engine never throwing for an unreachable server).
 */
export function openPostgresStore(url: string, options: StoreOptions): PostgresStore {
  const store = new PostgresStore(url, options);
  store.check();
  return store;
}

/**
 * A store on `url` that neither connects nor migrates until asked: for
 * commands that inspect or wipe a database without opening the bus on it.
 */
export function postgresStoreUnopened(url: string, options: StoreOptions): PostgresStore {
  return new PostgresStore(url, options);
}
