/**
 * The SQLite engine of the store: one long-lived connection per process, that heals.
 *
 * Opening sets the pragmas once (WAL with a bounded retry, because the
 * switch to WAL needs an exclusive lock that does not wait on the busy
 * handler; `synchronous=NORMAL`, which under WAL loses nothing when a
 * process crashes), brings the schema up to date, and caches prepared
 * statements for reuse.
 *
 * Writes go through `immediate(fn)`: `BEGIN IMMEDIATE` takes the write lock
 * up front, so a transaction never fails half-way on a read-to-write upgrade.
 * Writers first wait for their turn in a line shared by every process
 * (`write_queue.ts`), so the lock goes to them in the order they came and
 * nobody retries while the line moves. Only a program outside the line can
 * still hold the lock then; SQLite's own busy handler sleeps at least a
 * millisecond per retry, ten times longer than our transactions hold the
 * lock, so the store waits itself: a few short synchronous naps (tens of
 * microseconds, growing) and then millisecond ones with the event loop
 * free, so a database locked for long never freezes the server's other
 * requests. A lone write that names its topics takes along the writes that
 * wait on them (`setFollowers`), each in a savepoint, before its `COMMIT`.
 * `fn` is synchronous on purpose: with one
 * connection shared by every request of the process, an `await` inside a
 * transaction would let another request's statements into it.
 *
 * The store never gives up for good. A file that cannot be opened, or holds
 * another schema, leaves the store failed with the `BusError` that explains
 * why; every access throws it, and at most once a second an access tries to
 * open the file again, so the server recovers when the condition ends (and
 * `ping`, which needs no database, keeps working throughout). Before every
 * write, and at least every 250 ms of reads, the store checks that the path
 * still names the file it opened: a database deleted or replaced under a
 * running server is reopened instead of silently writing into a ghost file.
 * Each tool call checks too (`check()`), so it never reads a ghost either.
 *
 * @module
 */

import { DatabaseSync, type StatementSync } from "node:sqlite";
import { BusError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { isBroken, isBusy, isNotADatabase, toBusError } from "./_sqlite_errors.ts";
import { ensureSchema, type MigrationState, migrationState, schemaMismatch } from "./migrate.ts";
import type { FollowingWrite, Query, Store, StoreOptions, WriteOptions } from "./types.ts";
import { busyError, type Leave, WriteQueue } from "./write_queue.ts";

/** A write waiting for its transaction. */
interface PendingWrite {
  fn: () => unknown;
  /** When its wait for the write lock runs out (`performance.now()`). */
  deadline: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Fails it when its wait runs out before its group starts, where the group waits longer. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The topics it named ({@linkcode WriteOptions.topics}). */
  topics: readonly string[] | undefined;
}

/**
 * Run `followers` in the open transaction of `db`, each in a savepoint: one
 * that throws is undone alone (a failure that ended the transaction fails
 * it all). Returns those that had something to tell.
 */
function runFollowers(
  db: DatabaseSync,
  followers: FollowingWrite[],
): { follower: FollowingWrite; value: unknown }[] {
  const followed: { follower: FollowingWrite; value: unknown }[] = [];
  for (const follower of followers) {
    db.exec("SAVEPOINT following_write");
    try {
      const value = follower.run();
      db.exec("RELEASE following_write");
      if (value !== undefined) followed.push({ follower, value });
    } catch (error) {
      if (!db.isTransaction) throw error;
      db.exec("ROLLBACK TO following_write");
      db.exec("RELEASE following_write");
    }
  }
  return followed;
}

/**
 * `sql` with each `LIMIT ?` (or `LIMIT ?N`) written `LIMIT +?`. SQLite lets
 * the query planner read a `LIMIT` that is a bare parameter, and so marks
 * the statement to be prepared again whenever that parameter is bound: every
 * run of a cached statement paid for a fresh compile (measured 16.6 against
 * 4.7 µs for the next-messages read of `sync`, SQLite 3.53). The unary plus
 * makes the limit an expression: same value, same rows, compiled once.
 */
export function limitsAsExpressions(sql: string): string {
  return sql.replaceAll(/\bLIMIT \?/g, "LIMIT +?");
}

/** Naps (ms) between the first attempts to take the write lock, spent blocking. */
const LOCK_NAPS_MS = [
  0.05,
  0.1,
  0.2,
  0.3,
  0.4,
  0.5,
  0.5,
  0.5,
  0.5,
  0.5,
  0.5,
  1,
  1,
  1,
  1,
  1,
  1,
  1,
  1,
];
/** How often a failed store may try to open the file again. */
const RETRY_OPEN_MS = 1000;
/** How stale the "still the same file" check may be for reads. */
const VERIFY_READS_MS = 250;
/**
 * How stale it may be for a write: the check its tool call made as it began
 * ({@linkcode SqliteStore.check}) serves the write that follows at once. A
 * file replaced between that check and the write is no more at risk than
 * one replaced during the write itself: both are found by the next call.
 */
const VERIFY_WRITES_MS = 1;

interface FileIdentity {
  dev: number;
  ino: number;
}

/** A SQLite database file (or `:memory:`) as this process's store. */
export class SqliteStore implements Store {
  readonly engine = "sqlite";
  readonly path: string;
  readonly #busyTimeoutMs: number;
  readonly #log: Logger;
  readonly #statements = new Map<string, StatementSync>();
  readonly #queue: WriteQueue;
  #db: DatabaseSync | undefined;
  #identity: FileIdentity | undefined;
  #verifiedAt = 0;
  #failure: BusError | undefined;
  /** Writes waiting for the next transaction, and whether a group is being written. */
  readonly #pending: PendingWrite[] = [];
  #writing = false;
  #followers: ((topics: readonly string[]) => FollowingWrite[]) | undefined;
  /** When the turn being waited for is given up (0 while none is: the loop sees to the rest). */
  #turnDeadline = 0;
  #retryAt = 0;
  #replacedAt: Date | undefined;

  /** Use {@linkcode openSqliteStore}. */
  constructor(path: string, options: StoreOptions) {
    this.path = path;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#log = options.log;
    this.#queue = new WriteQueue(path === ":memory:" ? undefined : `${path}-lock`);
  }

  /**
   * Make sure the store is usable: verify that the path still names the
   * opened file, and open or reopen it if due. Called once per tool call.
   *
   * @returns why the store cannot be used, or undefined when it is ready
   */
  check(): BusError | undefined {
    try {
      this.#connection(0);
      return undefined;
    } catch (error) {
      return error instanceof BusError ? error : toBusError(error, this.path) as BusError;
    }
  }

  ready(): Promise<BusError | undefined> {
    return Promise.resolve(this.check());
  }

  /**
   * When this process last found its database file deleted or replaced (and
   * reopened the path), or undefined: what was stored before is not there.
   */
  get replacedAt(): Date | undefined {
    return this.#replacedAt;
  }

  /** {@linkcode Store.gather}: on SQLite the statements simply run one after another. */
  gather(queries: readonly Query[]): Record<string, unknown>[][] {
    return queries.map((query) => this.stmt(query.sql).all(...query.params));
  }

  /** {@linkcode Store.finish}: the transaction commits when its function returns. */
  finish(queries: readonly Query[]): Record<string, unknown>[][] {
    return this.gather(queries);
  }

  /**
   * A cached prepared statement (see {@linkcode Store.stmt}); like the
   * PostgreSQL engine's, it refuses to run outside `read()` or
   * `immediate()`, so a statement run without its transaction fails on both
   * engines, not only where the other engine's tests would notice.
   */
  stmt(sql: string): StatementSync {
    if (!this.#db?.isTransaction) {
      throw new Error("A statement ran outside store.read() or store.immediate()");
    }
    return this.#prepared(sql);
  }

  /**
   * A cached prepared statement, in or out of a transaction (the engine's own
   * use), its `LIMIT`s made expressions ({@linkcode limitsAsExpressions}).
   */
  #prepared(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#connection(VERIFY_READS_MS).prepare(limitsAsExpressions(sql));
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Run `fn` in one `BEGIN IMMEDIATE` transaction; commit if it returns,
   * roll back if it throws. Writes of this process that arrive while one
   * waits for its turn are grouped into the next transaction, each in a
   * savepoint of its own, so one that throws is undone alone and each sees
   * the ones before it, as if they had run one after another; a group
   * commits once (a busy bus's writes share the commit's cost).
   *
   * @throws {BusError} `DB_BUSY` when the lock stays taken for `busyTimeoutMs`
   */
  immediate<T>(fn: () => T, options: WriteOptions = {}): Promise<T> {
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    const deadline = performance.now() + (options.waitMs ?? this.#busyTimeoutMs);
    const write: PendingWrite = {
      fn,
      deadline,
      resolve: resolve as (value: unknown) => void,
      reject,
      timer: undefined,
      topics: options.topics,
    };
    this.#pending.push(write);
    if (!this.#writing) void this.#writeAll();
    else if (deadline < this.#turnDeadline) this.#timeOut(write);
    return promise;
  }

  /** Give up `write` at its deadline, when the turn being waited for may come later. */
  #timeOut(write: PendingWrite): void {
    write.timer = setTimeout(() => this.#giveUp(write), write.deadline - performance.now());
  }

  /** Fail `write` with `DB_BUSY` if it still waits for its transaction: its wait ran out. */
  #giveUp(write: PendingWrite): void {
    const at = this.#pending.indexOf(write);
    if (at < 0) return;
    this.#pending.splice(at, 1);
    if (write.timer !== undefined) clearTimeout(write.timer);
    write.reject(busyError());
  }

  /** Run the pending writes, a group at a time, until none is left. */
  async #writeAll(): Promise<void> {
    this.#writing = true;
    // After a group, the next asks for its turn the ordinary way (see `WriteQueue.turn`).
    let again = false;
    try {
      for (;; again = true) {
        const now = performance.now();
        for (const write of this.#pending.filter((write) => write.deadline <= now)) {
          this.#giveUp(write);
        }
        if (this.#pending.length === 0) return;
        // The turn is waited for as long as the most patient write would; the others give up
        // at their own deadlines (a lone write, the usual case, needs no timer of its own).
        let deadline = 0;
        for (const write of this.#pending) deadline = Math.max(deadline, write.deadline);
        for (const write of this.#pending) {
          if (write.deadline < deadline && write.timer === undefined) this.#timeOut(write);
        }
        this.#turnDeadline = deadline;
        let leave: Leave;
        try {
          leave = await this.#queue.turn(deadline - now, { again });
        } catch {
          continue; // (each write's own wait ran out meanwhile)
        } finally {
          this.#turnDeadline = 0;
        }
        try {
          // Everything that arrived while this group waited for the turn.
          const group = this.#pending.splice(0);
          for (const write of group) if (write.timer !== undefined) clearTimeout(write.timer);
          if (group.length > 0) await this.#commitGroup(group);
        } finally {
          leave();
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /**
   * Run `group` in one transaction and settle each write with its own
   * outcome. `BEGIN IMMEDIATE` waits out a program outside the line (a few
   * short synchronous naps, then with the event loop free); a write of the
   * group whose wait runs out meanwhile leaves it with `DB_BUSY`. Once the
   * transaction is open, everything up to `COMMIT` runs without a pause: a
   * read of another request must never land inside it.
   */
  async #commitGroup(group: PendingWrite[]): Promise<void> {
    for (let attempt = 0;; attempt++) {
      let db: DatabaseSync;
      try {
        db = this.#connection(VERIFY_WRITES_MS);
        db.exec("BEGIN IMMEDIATE");
      } catch (error) {
        const failure = this.#fail(error);
        const now = performance.now();
        for (const write of group.filter((write) => !isBusy(error) || write.deadline <= now)) {
          group.splice(group.indexOf(write), 1);
          write.reject(failure);
        }
        if (group.length === 0) return;
        const nap = LOCK_NAPS_MS[attempt];
        if (nap !== undefined) napSync(nap * (0.5 + Math.random()));
        // Held for long: wait with the event loop free.
        else await new Promise((resolve) => setTimeout(resolve, 1 + Math.random()));
        continue;
      }
      return this.#runGroup(db, group);
    }
  }

  /** {@linkcode Store.setFollowers}. */
  setFollowers(find: (topics: readonly string[]) => FollowingWrite[]): void {
    this.#followers = find;
  }

  /**
   * Run `group` in the open transaction of `db`, commit, and settle each
   * write. A lone write that succeeded takes its topics' followers along
   * (a group means writes are queuing: its followers wake as usual, and
   * then read what several writes sent at once).
   */
  #runGroup(db: DatabaseSync, group: PendingWrite[]): void {
    const one = group.length === 1;
    const outcomes: ({ value: unknown } | { error: unknown })[] = [];
    let followed: { follower: FollowingWrite; value: unknown }[] = [];
    try {
      for (const write of group) {
        if (!one) db.exec("SAVEPOINT grouped_write");
        try {
          outcomes.push({ value: write.fn() });
          if (!one) db.exec("RELEASE grouped_write");
        } catch (error) {
          // A failure that ended the transaction (a full disk, a broken file) fails them all.
          if (one || !db.isTransaction) throw error;
          db.exec("ROLLBACK TO grouped_write");
          db.exec("RELEASE grouped_write");
          outcomes.push({ error });
        }
      }
      const topics = one ? group[0]!.topics : undefined;
      if (topics && topics.length > 0 && this.#followers) {
        followed = runFollowers(db, this.#followers(topics));
      }
      db.exec("COMMIT");
    } catch (error) {
      if (db.isTransaction) db.exec("ROLLBACK");
      const failure = this.#fail(error);
      for (const write of group) write.reject(failure);
      return;
    }
    // The followers first: each was woken by this commit, and answers sooner than its writer.
    for (const { follower, value } of followed) follower.done(value);
    const settle = () =>
      group.forEach((write, i) => {
        const outcome = outcomes[i]!;
        if ("error" in outcome) write.reject(this.#fail(outcome.error));
        else write.resolve(outcome.value);
      });
    // Settled in the same turn, the writers' continuations would take turns with the followers'
    // at every `await` on the way to their answers (about 40 µs more per delivery in ping-pong);
    // after an immediate, every follower's answer has been written first.
    if (followed.length > 0) setImmediate(settle);
    else settle();
  }

  /**
   * Run read-only `fn` against one consistent snapshot.
   *
   * @throws {BusError} the store's failure, or a mapped storage error
   */
  read<T>(fn: () => T): T {
    const db = this.#connection(VERIFY_READS_MS);
    try {
      // Readers never wait for the writer under WAL; only a checkpoint or a
      // recovery in another process can make a read busy, and only briefly.
      retryWhileBusy(() => db.exec("BEGIN"), 1000);
      try {
        return fn();
      } finally {
        if (db.isTransaction) db.exec("COMMIT");
      }
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /**
   * SQLite's `PRAGMA data_version`: changes whenever another connection
   * commits (and when the file is reopened). A read of the WAL index, so it
   * costs about a microsecond.
   */
  dataVersion(): number {
    try {
      const row = this.#prepared("PRAGMA data_version").get() as { data_version: number };
      return row.data_version;
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /**
   * Rebuild the file without free pages and empty the WAL. Waits up to
   * `busyTimeoutMs` for other writers (VACUUM cannot run in a transaction,
   * so it cannot use the store's own lock naps).
   */
  vacuum(): void {
    const db = this.#connection(0);
    try {
      db.exec(`PRAGMA busy_timeout = ${this.#busyTimeoutMs}`);
      try {
        db.exec("VACUUM");
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        db.exec("PRAGMA busy_timeout = 0");
      }
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /**
   * A store that cannot be used at all, for `reason` (every access throws
   * it; it never tries to open anything).
   */
  static unusable(path: string, options: StoreOptions, reason: BusError): SqliteStore {
    const store = new SqliteStore(path, options);
    store.#failure = reason;
    store.#retryAt = Infinity;
    return store;
  }

  /** Close the connection for good (process shutdown). */
  close(): void {
    this.#closeConnection();
    this.#queue.close();
    this.#failure = new BusError("DB_UNAVAILABLE", "The database is closed");
    this.#retryAt = Infinity;
  }

  /**
   * The open connection, opening or reopening the file when due: when the
   * path was last found to name the open file more than `verifiedWithinMs`
   * ago, it is looked at again.
   */
  #connection(verifiedWithinMs: number): DatabaseSync {
    const now = performance.now();
    if (this.#db && now - this.#verifiedAt >= verifiedWithinMs) {
      this.#verifiedAt = now;
      if (!this.#stillSameFile()) {
        this.#log.warn("The database file was deleted or replaced; reopening it", {
          path: this.path,
        });
        this.#replacedAt = new Date();
        this.#closeConnection();
      }
    }
    if (this.#db) return this.#db;
    if (this.#failure && now < this.#retryAt) throw this.#failure;
    this.#open();
    if (!this.#db) throw this.#failure!;
    return this.#db;
  }

  #open(): void {
    let db: DatabaseSync | undefined;
    try {
      if (this.path !== ":memory:") keepPrivate(this.path);
      // No busy handler: the store does its own waiting (see the module documentation).
      db = new DatabaseSync(this.path, { timeout: 0 });
      const opened = db;
      retryWhileBusy(() => {
        const row = opened.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string };
        if (row.journal_mode !== "wal" && this.path !== ":memory:") {
          this.#log.warn("The database did not switch to WAL mode", { mode: row.journal_mode });
        }
      }, this.#busyTimeoutMs);
      db.exec("PRAGMA synchronous = NORMAL");
      const mismatch = retryWhileBusy(() => ensureSchema(opened, this.path), this.#busyTimeoutMs);
      if (mismatch) throw mismatch;
      this.#identity = this.path === ":memory:" ? undefined : identityOf(this.path);
      this.#db = db;
      this.#verifiedAt = performance.now();
      if (this.#failure) this.#log.warn("The database is usable again", { path: this.path });
      this.#failure = undefined;
    } catch (error) {
      if (db?.isOpen) db.close();
      const failure = isNotADatabase(error)
        ? schemaMismatch(this.path, "the file is not a SQLite database")
        : unwritableDirectory(this.path) ?? toBusError(error, this.path);
      const busError = failure instanceof BusError ? failure : new BusError(
        "DB_UNAVAILABLE",
        `Cannot open the database at "${this.path}": ${
          error instanceof Error ? error.message : error
        }`,
        { cause: error },
      );
      if (busError.message !== this.#failure?.message) {
        this.#log.warn(busError.message, { path: this.path });
      }
      this.#failure = busError;
      this.#retryAt = performance.now() + RETRY_OPEN_MS;
    }
  }

  #stillSameFile(): boolean {
    if (!this.#identity) return true;
    try {
      const now = identityOf(this.path);
      return now !== undefined && now.dev === this.#identity.dev &&
        now.ino === this.#identity.ino;
    } catch {
      return false;
    }
  }

  /** Map an error; a connection that SQLite reports broken is dropped for a reopen. */
  #fail(error: unknown): unknown {
    if (isBroken(error)) {
      this.#closeConnection();
      this.#failure = toBusError(error, this.path) as BusError;
      this.#retryAt = 0;
    }
    return toBusError(error, this.path);
  }

  #closeConnection(): void {
    this.#statements.clear();
    if (this.#db?.isOpen) {
      try {
        this.#db.close();
      } catch {
        // A connection broken by I/O errors may refuse to close cleanly; it is dropped anyway.
      }
    }
    this.#db = undefined;
    this.#identity = undefined;
  }
}

/**
 * Open (creating if needed) the database at `path` and bring its schema up
 * to date. Never throws for a bad file: the store reports the failure from
 * `check()` and every access, and keeps trying to recover.
 *
 * @param path absolute file path or `:memory:`
 * @param options lock wait and logger
 */
export function openSqliteStore(path: string, options: StoreOptions): SqliteStore {
  const store = new SqliteStore(path, options);
  store.check();
  return store;
}

/**
 * Which of our migrations the database at `path` still needs, read without
 * creating or changing anything (undefined when there is no file).
 */
export function readMigrationState(path: string): MigrationState | undefined {
  if (path === ":memory:") return undefined;
  try {
    Deno.statSync(path);
  } catch {
    return undefined;
  }
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return migrationState(db);
  } finally {
    db.close();
  }
}

/**
 * Delete the database file and its `-wal`, `-shm`, `-journal` and `-lock` companions.
 * A stale `-wal` left beside a new file would be replayed into it.
 *
 * @returns the paths that existed and were removed
 */
export function wipeDatabase(path: string): string[] {
  const removed: string[] = [];
  for (const file of databaseFiles(path)) {
    try {
      Deno.removeSync(file);
      removed.push(file);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return removed;
}

/**
 * SQLite says only "unable to open database file" when the directory is
 * read-only; say which directory and why, so the user can fix it.
 */
function unwritableDirectory(path: string): BusError | undefined {
  if (path === ":memory:") return undefined;
  const dir = path.slice(0, Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"))) || ".";
  try {
    Deno.removeSync(Deno.makeTempFileSync({ dir, prefix: ".agent-bus-probe-" }));
    return undefined;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return new BusError(
      "DB_UNAVAILABLE",
      `Cannot open the database at "${path}": its directory "${dir}" is not writable ` +
        `(${error instanceof Error ? error.message : error}). Make it writable or point ` +
        `AGENT_BUS_DB at a writable place`,
      { cause: error },
    );
  }
}

function identityOf(path: string): FileIdentity | undefined {
  const info = Deno.statSync(path);
  return info.ino === null || info.dev === null ? undefined : { dev: info.dev, ino: info.ino };
}

/** The files of a database: the file itself and the companions SQLite and the store keep. */
export function databaseFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, `${path}-lock`];
}

/**
 * Make sure only this user can read the conversations: a missing directory
 * is created 0700, a missing database file 0600 (SQLite gives its `-wal`
 * and `-shm` the database file's mode), and any of the files that another
 * user could read is narrowed to 0600 again, on every open. The directory
 * of a database the user placed elsewhere is left as it is (`doctor` says
 * when it is wider). Files this user does not own are left alone. Where
 * modes mean nothing (Windows) this does nothing.
 */
function keepPrivate(path: string): void {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  if (cut > 0) Deno.mkdirSync(path.slice(0, cut), { recursive: true, mode: 0o700 });
  if (Deno.build.os === "windows") return;
  try {
    Deno.openSync(path, { write: true, createNew: true, mode: 0o600 }).close();
  } catch { /* it exists (or cannot be made: opening it says why) */ }
  for (const file of databaseFiles(path)) {
    try {
      const mode = Deno.statSync(file).mode;
      if (mode !== null && (mode & 0o077) !== 0) Deno.chmodSync(file, 0o600);
    } catch { /* absent, or not ours */ }
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Block the thread for `ms` (fractions allowed). Only for waits shorter than a timer tick. */
function napSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * Run `fn`, retrying while the database is busy. Waits synchronously: it
 * runs only while a file is being opened or a read meets a checkpoint,
 * both rare and short.
 */
function retryWhileBusy<T>(fn: () => T, timeoutMs: number): T {
  const deadline = performance.now() + Math.max(timeoutMs, 1000);
  for (let attempt = 0;; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error) || performance.now() >= deadline) throw error;
      napSync(Math.min(0.1 * 2 ** attempt, 20) * (0.5 + Math.random()));
    }
  }
}
