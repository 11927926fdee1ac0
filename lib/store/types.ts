/**
 * The store's interface and the types around it, apart from `mod.ts` (which
 * picks an engine) so that the engines and the store modules can name them
 * without importing the module that imports them.
 *
 * @module
 */

import type { BusError } from "../errors.ts";
import type { Logger } from "../log.ts";

/**
 * A prepared statement: the part of `node:sqlite`'s `StatementSync` the store
 * modules use. `get` and `all` take the type of the rows their SQL selects
 * (unchecked: the statement's columns are the caller's word).
 */
export interface Statement {
  run(...params: SqlValue[]): { changes: number | bigint };
  get<Row extends object = Record<string, unknown>>(...params: SqlValue[]): Row | undefined;
  all<Row extends object = Record<string, unknown>>(...params: SqlValue[]): Row[];
}

/** A value a statement takes. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/**
 * What a statement that writes only rows of one topic declares where it is
 * written ({@linkcode Store.stmt}): it changes rows of a table keyed by topic
 * (cursors, the seq counter, waits, turns, reply tokens…) whose topic is one
 * its write named in {@linkcode WriteOptions.topics}. On PostgreSQL such a
 * statement runs under those topics' locks alone; any other statement that
 * is not a `SELECT` runs under the commit lock as well (see
 * `postgres/locks.ts`). The test clusters check every row such a write
 * touches against the locks it holds (`postgres/lock_checks.ts`).
 */
export const TOPIC_ROWS = "topic rows";
/** The scopes a statement may declare: {@linkcode TOPIC_ROWS}. */
export type DeclaredScope = typeof TOPIC_ROWS;

/** One statement of {@linkcode Store.gather}, in SQLite's dialect. */
export interface Query {
  sql: string;
  params: SqlValue[];
  /** {@linkcode TOPIC_ROWS} when it writes only rows of one of its write's topics. */
  scope?: DeclaredScope;
}

/** The database of this process. All SQL in the program runs through one of these. */
export interface Store {
  /** Which engine: SQL that differs between them is chosen by this. */
  readonly engine: "sqlite" | "postgres";
  /** The file path, or the URL without its password. */
  readonly path: string;
  /**
   * Make sure the store is usable, reconnecting or reopening if due.
   * Called once per tool call.
   *
   * @returns why the store cannot be used, or undefined when it is ready
   */
  check(): BusError | undefined;
  /**
   * {@linkcode Store.check}, but waiting out the first seconds of an outage
   * (a database server restarting) instead of failing at once.
   */
  ready(): Promise<BusError | undefined>;
  /** When the database was found replaced under this process (SQLite files only). */
  readonly replacedAt: Date | undefined;
  /**
   * A cached prepared statement, written in SQLite's dialect (the PostgreSQL
   * engine translates it). Only inside `read`/`immediate` callbacks.
   * `scope` declares a statement that writes only rows of its write's
   * topics ({@linkcode TOPIC_ROWS}); one SQL text has one scope.
   */
  stmt(sql: string, scope?: DeclaredScope): Statement;
  /**
   * Run `queries` in order and return each one's rows. On PostgreSQL they
   * travel together, with any writes queued before them: one round trip for
   * reads that do not depend on each other. Only inside `read`/`immediate`
   * callbacks.
   */
  gather(queries: readonly Query[]): Record<string, unknown>[][];
  /**
   * {@linkcode Store.gather} for a write transaction's last statements: on
   * PostgreSQL they travel with its `COMMIT`, saving the round trip that
   * would send it alone. Nothing may run after them in the transaction.
   */
  finish(queries: readonly Query[]): Record<string, unknown>[][];
  /**
   * Run `fn` in one write transaction (serialized with every other writer of
   * the bus, on every host, or on PostgreSQL only with writers of the same
   * topics when `options.topics` names them); commit if it returns, roll back
   * if it throws.
   * `waitMs` bounds the wait for the write lock (default: the store's busy
   * timeout), after which it throws `DB_BUSY`.
   */
  immediate<T>(fn: () => T, options?: WriteOptions): Promise<T>;
  /** Run read-only `fn` against one consistent snapshot. */
  read<T>(fn: () => T): T;
  /** A number that changes whenever another process commits. */
  dataVersion(): number;
  /**
   * Push notification of other processes' commits, where the engine has it
   * (PostgreSQL's LISTEN), with the topics they changed: the change feed
   * then needs no timer at all, and wakes only the waiters concerned.
   */
  subscribe?(listener: (topics: ChangedTopics) => void): () => void;
  /**
   * Let writes that wait on topics ride in the transaction of a write to
   * one of them (SQLite): after a lone write that named `topics`, before its
   * `COMMIT`, each of `find(topics)` runs in a savepoint of its own and sees
   * that write, as if it had been woken by its commit and run next; what it
   * returns (undefined: it did nothing worth telling) goes to its `done`
   * once the transaction has committed. One that throws is undone alone and
   * not told. Engines without it leave such writes to their wake-ups.
   */
  setFollowers?(find: (topics: readonly string[]) => FollowingWrite[]): void;
  /** Reclaim free space. */
  vacuum(): void;
  /** Close for good (process shutdown). */
  close(): void;
}

/** A write that runs in the transaction of another (see {@linkcode Store.setFollowers}). */
export interface FollowingWrite {
  /** Runs inside the transaction, after the write it follows; undefined: nothing to tell. */
  run(): unknown;
  /**
   * What `run` returned, once the transaction committed. Its writer hears in
   * a later turn of the event loop: what `done` sets off without waiting on
   * I/O (answering a waiting call) runs to its end first.
   */
  done(value: unknown): void;
}

/** Options of {@linkcode openStore}. */
export interface StoreOptions {
  /** Total time a write waits for the lock before `DB_BUSY`. */
  busyTimeoutMs: number;
  log: Logger;
}

/** How long a write may wait for the lock. */
export interface WriteOptions {
  /** At most this long (milliseconds) instead of the store's busy timeout. */
  waitMs?: number;
  /**
   * The topics whose state alone this write changes: waiters on other topics
   * need not look. Undefined when anything may have changed. On PostgreSQL
   * the write then locks only these topics (see `postgres/locks.ts`), so
   * everything it decides must depend on their rows alone, or on rows only
   * writes without `topics` change. An empty list is a write no waiter need
   * hear of (the search index's upkeep, its leases): on PostgreSQL it takes
   * the bus lock shared, so writers of topics never wait for it, and it
   * wakes nobody.
   */
  topics?: readonly string[];
}

/**
 * What a commit changed, as a change feed hears it: the topics of a write
 * that named them ({@linkcode WriteOptions.topics}), undefined for anything.
 */
export type ChangedTopics = readonly string[] | undefined;
