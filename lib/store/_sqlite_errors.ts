/**
 * Classifying node:sqlite errors.
 *
 * Deno's node:sqlite throws `Error`s with `code: "ERR_SQLITE_ERROR"` and
 * SQLite's message, but no numeric result code, so the classes below are
 * told apart by SQLite's fixed English messages (sqlite3ErrStr).
 *
 * @module
 */

import { BusError } from "../errors.ts";

/** True for SQLITE_BUSY and SQLITE_LOCKED, which a retry can clear. */
export function isBusy(error: unknown): boolean {
  return error instanceof Error &&
    /database is locked|database table is locked|database is busy|SQLITE_BUSY/i.test(error.message);
}

/** True for SQLITE_NOTADB: the file exists but is not a SQLite database. */
export function isNotADatabase(error: unknown): boolean {
  return error instanceof Error && /file is not a database|file is encrypted/i.test(error.message);
}

/**
 * True when the connection itself is in trouble (I/O errors, its files gone):
 * it should be dropped and the database opened afresh.
 */
export function isBroken(error: unknown): boolean {
  return error instanceof Error &&
    /disk I\/O error|unable to open database file|database disk image is malformed/i.test(
      error.message,
    );
}

/** True for SQLITE_CORRUPT: SQLite found the file damaged. */
export function isCorrupt(error: unknown): boolean {
  return error instanceof Error &&
    /database disk image is malformed|malformed database schema|SQLITE_CORRUPT/i.test(
      error.message,
    );
}

/** True when SQLite could not open, read or write the file (SQLITE_CANTOPEN, READONLY, IOERR, FULL). */
export function isUnavailable(error: unknown): boolean {
  return error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotFound ||
    (error instanceof Error &&
      /unable to open database|readonly database|disk I\/O error|database or disk is full|no such file|permission denied|requires (read|write) access/i
        .test(error.message));
}

/**
 * Turn a storage-level failure into the wire error a client can act on.
 * `BusError`s pass through; errors of unknown kind are returned unchanged.
 */
export function toBusError(error: unknown, dbPath: string): unknown {
  if (error instanceof BusError) return error;
  if (isBusy(error)) {
    return new BusError(
      "DB_BUSY",
      "The database is busy (another process holds its write lock); retry the call",
      { cause: error },
    );
  }
  if (isCorrupt(error)) {
    return new BusError(
      "DB_UNAVAILABLE",
      `The database at "${dbPath}" is damaged (SQLite: ${(error as Error).message}). Stop the ` +
        `agents, then restore the file from a backup, or move it (and its -wal and -shm files) ` +
        `away to start a new bus; "agent-bus doctor" checks it`,
      { cause: error },
    );
  }
  if (isUnavailable(error)) {
    return new BusError(
      "DB_UNAVAILABLE",
      `Cannot use the database at "${dbPath}": ${(error as Error).message}`,
      { cause: error },
    );
  }
  return error;
}
