/**
 * The SQLite store: one long-lived connection per process.
 *
 * `openStore()` sets the pragmas once (WAL with a bounded retry, because the
 * switch to WAL needs an exclusive lock that does not wait on the busy
 * handler; `synchronous=NORMAL`, which is crash-safe under WAL), brings the
 * schema up to date, and caches prepared statements for reuse.
 *
 * Writes go through `immediate(fn)`: `BEGIN IMMEDIATE` takes the write lock
 * up front, so a transaction never fails half-way on a read-to-write upgrade.
 * Waiting for that lock happens in short synchronous slices with the event
 * loop free in between, so a busy database never freezes the server's other
 * requests. `fn` is synchronous on purpose: with one connection shared by
 * every request of the process, an `await` inside a transaction would let
 * another request's statements into it.
 *
 * A store whose file cannot be used, or whose schema is not the seed's,
 * still opens: every access then throws the `BusError` that explains why, so
 * tools that need no database (`ping`) keep working.
 *
 * @module
 */

import { DatabaseSync, type StatementSync } from "node:sqlite";
import { BusError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { isBusy, isNotADatabase, toBusError } from "./_sqlite_errors.ts";
import { ensureSchema, schemaMismatch } from "./migrate.ts";

/** How long one synchronous wait for a lock may block the event loop. */
const LOCK_SLICE_MS = 50;

/** Options of {@linkcode openStore}. */
export interface StoreOptions {
  /** Total time a write waits for the lock before `DB_BUSY`. */
  busyTimeoutMs: number;
  log: Logger;
}

/** The open database. All SQL in the program runs through one of these. */
export class Store {
  readonly path: string;
  readonly #db: DatabaseSync | undefined;
  readonly #statements = new Map<string, StatementSync>();
  readonly #busyTimeoutMs: number;
  readonly #failure: BusError | undefined;

  /** Use {@linkcode openStore}; this constructor does no I/O. */
  constructor(
    path: string,
    init: { db?: DatabaseSync; failure?: BusError; busyTimeoutMs: number },
  ) {
    this.path = path;
    this.#db = init.db;
    this.#failure = init.failure;
    this.#busyTimeoutMs = init.busyTimeoutMs;
  }

  /** Why the store cannot be used, or undefined when it is ready. */
  get failure(): BusError | undefined {
    return this.#failure;
  }

  /**
   * A cached prepared statement. Only for use inside `read`/`immediate`
   * callbacks (they check that the store is usable and map errors).
   */
  stmt(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#connection().prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Run `fn` in one `BEGIN IMMEDIATE` transaction; commit if it returns,
   * roll back if it throws.
   *
   * @throws {BusError} `DB_BUSY` when the lock stays taken for `busyTimeoutMs`
   */
  async immediate<T>(fn: () => T): Promise<T> {
    const db = this.#connection();
    const deadline = performance.now() + this.#busyTimeoutMs;
    for (let attempt = 0;; attempt++) {
      try {
        db.exec("BEGIN IMMEDIATE");
        break;
      } catch (error) {
        if (!isBusy(error) || performance.now() >= deadline) throw toBusError(error, this.path);
        // Let other requests run, then try again; jitter spreads competing processes.
        await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 10) * Math.random()));
      }
    }
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      throw toBusError(error, this.path);
    }
  }

  /**
   * Run read-only `fn` against one consistent snapshot.
   *
   * @throws {BusError} the store's failure, or a mapped storage error
   */
  read<T>(fn: () => T): T {
    const db = this.#connection();
    try {
      db.exec("BEGIN");
      try {
        return fn();
      } finally {
        if (db.isTransaction) db.exec("COMMIT");
      }
    } catch (error) {
      throw toBusError(error, this.path);
    }
  }

  /**
   * SQLite's `PRAGMA data_version`: changes whenever another connection
   * commits. A read of the WAL index, so it costs about a microsecond.
   */
  dataVersion(): number {
    try {
      const row = this.stmt("PRAGMA data_version").get() as { data_version: number };
      return row.data_version;
    } catch (error) {
      throw toBusError(error, this.path);
    }
  }

  /** Close the connection; later calls throw. */
  close(): void {
    this.#statements.clear();
    if (this.#db?.isOpen) this.#db.close();
  }

  #connection(): DatabaseSync {
    if (this.#failure) throw this.#failure;
    if (!this.#db?.isOpen) throw new BusError("DB_UNAVAILABLE", "The database is closed");
    return this.#db;
  }
}

/**
 * Open (creating if needed) the database at `path` and bring its schema up
 * to date. Never throws for a bad file: the returned store carries the
 * failure instead.
 *
 * @param path absolute file path or `:memory:`
 * @param options lock wait and logger
 */
export async function openStore(path: string, options: StoreOptions): Promise<Store> {
  const busyTimeoutMs = options.busyTimeoutMs;
  let db: DatabaseSync | undefined;
  try {
    if (path !== ":memory:") ensureParentDir(path);
    db = new DatabaseSync(path, { timeout: Math.min(LOCK_SLICE_MS, busyTimeoutMs) });
    await retryWhileBusy(() => {
      const mode = (db!.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string })
        .journal_mode;
      if (mode !== "wal" && path !== ":memory:") {
        options.log.warn("The database did not switch to WAL mode", { path, mode });
      }
    }, busyTimeoutMs);
    db.exec("PRAGMA synchronous = NORMAL");
    const failure = await retryWhileBusy(() => ensureSchema(db!, path), busyTimeoutMs);
    if (failure) {
      options.log.warn(failure.message, { path });
      return new Store(path, { db, failure, busyTimeoutMs });
    }
    return new Store(path, { db, busyTimeoutMs });
  } catch (error) {
    if (db?.isOpen) db.close();
    const failure = isNotADatabase(error)
      ? schemaMismatch(path, "the file is not a SQLite database")
      : toBusError(error, path);
    const busError = failure instanceof BusError ? failure : new BusError(
      "DB_UNAVAILABLE",
      `Cannot open the database at "${path}": ${error instanceof Error ? error.message : error}`,
      { cause: error },
    );
    options.log.warn(busError.message, { path });
    return new Store(path, { failure: busError, busyTimeoutMs });
  }
}

/**
 * Delete the database file and its `-wal`, `-shm` and `-journal` companions.
 * A stale `-wal` left beside a new file would be replayed into it.
 *
 * @returns the paths that existed and were removed
 */
export function wipeDatabase(path: string): string[] {
  const removed: string[] = [];
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      Deno.removeSync(file);
      removed.push(file);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return removed;
}

function ensureParentDir(path: string): void {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  if (cut > 0) Deno.mkdirSync(path.slice(0, cut), { recursive: true });
}

async function retryWhileBusy<T>(fn: () => T, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + Math.max(timeoutMs, 1000);
  for (let attempt = 0;; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error) || performance.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}
