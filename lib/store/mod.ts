/**
 * The store: the one interface the bus layer talks to, and the choice of engine.
 *
 * Two engines implement {@linkcode Store}: a SQLite file (the embedded
 * default, `sqlite.ts`) and a PostgreSQL database for a bus that spans
 * machines (`postgres/mod.ts`). `AGENT_BUS_DB=postgres://…` (or
 * `postgresql://…`) selects PostgreSQL; any other URL scheme is refused with
 * a clear error; anything else is a file path.
 *
 * Every transaction is a synchronous function on purpose: with one
 * connection shared by every request of the process, an `await` inside a
 * transaction would let another request's statements into it. Both engines
 * keep that shape (the PostgreSQL engine blocks on its worker, see
 * `postgres/bridge.ts`), so the store modules, the bus and their rules are
 * the same code on both.
 *
 * @module
 */

import { redactUrl, urlScheme } from "../config.ts";
import { BusError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { MigrationState } from "./migrate.ts";
import { openPostgresStore, type PostgresProbe, postgresStoreUnopened } from "./postgres/mod.ts";
import {
  openSqliteStore,
  readMigrationState as readSqliteMigrationState,
  SqliteStore,
  wipeDatabase as wipeSqliteDatabase,
} from "./sqlite.ts";

export type { MigrationState } from "./migrate.ts";
export { type PostgresProbe, sessionSettings } from "./postgres/mod.ts";

/** A prepared statement: the part of `node:sqlite`'s `StatementSync` the store modules use. */
export interface Statement {
  run(...params: SqlValue[]): { changes: number | bigint };
  get(...params: SqlValue[]): Record<string, unknown> | undefined;
  all(...params: SqlValue[]): Record<string, unknown>[];
}

/** A value a statement takes. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** One statement of {@linkcode Store.gather}, in SQLite's dialect. */
export interface Query {
  sql: string;
  params: SqlValue[];
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
   */
  stmt(sql: string): Statement;
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
  /** Reclaim free space. */
  vacuum(): void;
  /** Close for good (process shutdown). */
  close(): void;
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
   * writes without `topics` change.
   */
  topics?: readonly string[];
}

/**
 * What a commit changed, as a change feed hears it: the topics of a write
 * that named them ({@linkcode WriteOptions.topics}), undefined for anything.
 */
export type ChangedTopics = readonly string[] | undefined;

/** True when `location` names a PostgreSQL database. */
export function isPostgresUrl(location: string): boolean {
  const scheme = urlScheme(location);
  return scheme === "postgres" || scheme === "postgresql";
}

/**
 * Open the store `location` names: a `postgres://` URL, or a SQLite file
 * path (or `:memory:`). Never throws for an unusable database: the store
 * reports the failure from `check()` and every access, and keeps trying to
 * recover.
 */
export function openStore(location: string, options: StoreOptions): Store {
  const scheme = urlScheme(location);
  if (scheme === undefined) return openSqliteStore(location, options);
  if (isPostgresUrl(location)) return openPostgresStore(location, options);
  const label = redactUrl(location);
  const reason = new BusError(
    "DB_UNAVAILABLE",
    `AGENT_BUS_DB is a ${scheme}:// URL (${label}); agent-bus stores a bus in a SQLite file ` +
      `(a path) or in PostgreSQL (postgres://user@host:port/database)`,
  );
  options.log.error(reason.message);
  return SqliteStore.unusable(label, options, reason);
}

/**
 * Which of our migrations the database at `location` still needs, read
 * without changing anything (undefined when there is no SQLite file yet).
 *
 * @throws {BusError} `DB_UNAVAILABLE` when a PostgreSQL server cannot be reached
 */
export function readMigrationState(
  location: string,
  options: StoreOptions,
): MigrationState | undefined {
  if (!isPostgresUrl(location)) return readSqliteMigrationState(location);
  const store = postgresStoreUnopened(location, options);
  try {
    return store.migrationState();
  } finally {
    store.close();
  }
}

/**
 * Delete the bus at `location`: a SQLite file and its `-wal`, `-shm`,
 * `-journal` and `-lock` companions, or our tables in a PostgreSQL database.
 *
 * @returns what was removed (files or tables)
 */
export function wipeDatabase(location: string, options: StoreOptions): string[] {
  if (!isPostgresUrl(location)) return wipeSqliteDatabase(location);
  const store = postgresStoreUnopened(location, options);
  try {
    return store.wipe();
  } finally {
    store.close();
  }
}

/**
 * Connect to the PostgreSQL database at `url`, bring its schema up to date
 * like any agent-bus process would, and time a notification's round trip.
 *
 * @throws {BusError} `DB_UNAVAILABLE` when it cannot be used
 */
export async function probePostgres(url: string, options: StoreOptions): Promise<PostgresProbe> {
  const store = postgresStoreUnopened(url, options);
  try {
    return await store.probe();
  } finally {
    store.close();
  }
}
