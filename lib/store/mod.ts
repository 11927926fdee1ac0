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
import type { MigrationState } from "./migrate.ts";
import type { Store, StoreOptions } from "./types.ts";
import { openPostgresStore, type PostgresProbe, postgresStoreUnopened } from "./postgres/mod.ts";
import {
  openSqliteStore,
  readMigrationState as readSqliteMigrationState,
  SqliteStore,
  wipeDatabase as wipeSqliteDatabase,
} from "./sqlite.ts";

export type { MigrationState } from "./migrate.ts";
export type * from "./types.ts";
export { type PostgresProbe, sessionSettings } from "./postgres/mod.ts";

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
  const label = redactUrl(location);
  const problem = isPostgresUrl(location)
    ? postgresUrlProblem(location)
    : `AGENT_BUS_DB is a ${scheme}:// URL (${label}); agent-bus stores a bus in a SQLite file ` +
      `(a path) or in PostgreSQL (postgres://user@host:port/database)`;
  if (problem === undefined) return openPostgresStore(location, options);
  // (Nothing to retry: every call fails at once with the reason.)
  const reason = new BusError("DB_UNAVAILABLE", problem);
  options.log.error(reason.message);
  return SqliteStore.unusable(label, options, reason);
}

/**
 * Why a `postgres://` URL cannot name a database (it does not parse), or
 * undefined when it can. A malformed URL never
 * becomes reachable: it is reported once, not retried.
 */
function postgresUrlProblem(location: string): string | undefined {
  const label = redactUrl(location);
  try {
    // (As the client reads it: its parts are %-decoded.)
    const url = new URL(location);
    for (const part of [url.username, url.password, url.hostname, url.pathname]) {
      decodeURIComponent(part);
    }
    return undefined;
  } catch {
    return `AGENT_BUS_DB is not a valid PostgreSQL URL (${label}): write it as ` +
      "postgres://user:password@host:port/database, %-encoding any of @ : / ? # % in its parts " +
      "(an IPv6 host in brackets: [::1])";
  }
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
