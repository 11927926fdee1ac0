/**
 * `openRuntime()`: the one place a process is wired up and shut down.
 *
 * Every entry point (the stdio server, the HTTP server, each CLI command,
 * the benchmarks and the test helpers) opens its database, bus and search
 * engine here and closes them through `close()`, in the one order that is
 * safe: wake and release waiters, stop the indexer, then close the
 * database. Nothing above this module imports `lib/store` (the
 * architecture test checks it), so a second store engine plugs in here.
 * The few operations on a database file that need no open bus (wiping it,
 * reading its migration level, inspecting it) are re-exported from here
 * for the same reason.
 *
 * @module
 */

import type { ChangeFeedOptions } from "./bus/changes.ts";
import { type Bus, type Clock, createBus } from "./bus/mod.ts";
import { redactUrl, type ResolvedConfig, urlScheme } from "./config.ts";
import { BusError } from "./errors.ts";
import type { Logger } from "./log.ts";
import { SearchEngine } from "./search/mod.ts";
import { openStore, Store } from "./store/mod.ts";

export { inspectDatabaseFile, sqliteFeatures } from "./store/inspect.ts";
export { type MigrationState, readMigrationState, wipeDatabase } from "./store/mod.ts";

/** An open process runtime. */
export interface Runtime extends AsyncDisposable {
  readonly store: Store;
  readonly bus: Bus;
  readonly search: SearchEngine;
  /** Release waiters, stop background work and close the database. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@linkcode openRuntime}. */
export interface RuntimeOptions {
  log: Logger;
  /** Run the background indexer (servers do; one-shot commands do not). */
  indexing?: boolean;
  /** The clock of the bus (tests). */
  now?: Clock;
  /** Change-feed options (tests: intervals, the `beforeWait` seam). */
  changes?: ChangeFeedOptions;
  /** The embedding endpoint's `fetch` (tests). */
  fetch?: typeof fetch;
}

/**
 * Open the database of `config`, and the bus and search engine over it.
 * Never throws for a bad database: the store reports it on every access and
 * keeps trying to recover (see `lib/store/mod.ts`).
 */
export function openRuntime(config: ResolvedConfig, options: RuntimeOptions): Runtime {
  const { log } = options;
  const store = openStoreFor(config, log);
  const bus = createBus({ store, config, log, now: options.now, changes: options.changes });
  const search = new SearchEngine({ store, config, log, fetch: options.fetch });
  if (options.indexing) search.start();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      bus.changes.close();
      await search.close();
      store.close();
    })();
    return closing;
  };
  return { store, bus, search, close, [Symbol.asyncDispose]: close };
}

/**
 * The store `config.dbPath` names: a SQLite file, or, for a URL, a store
 * that refuses every access with the reason (this build has no other
 * engine), labelled without the URL's password.
 */
function openStoreFor(config: ResolvedConfig, log: Logger): Store {
  const options = { busyTimeoutMs: config.busyTimeoutMs, log };
  const scheme = urlScheme(config.dbPath);
  if (scheme === undefined) return openStore(config.dbPath, options);
  const label = redactUrl(config.dbPath);
  const reason = new BusError(
    "DB_UNAVAILABLE",
    `AGENT_BUS_DB is a ${scheme}:// URL (${label}), but this build stores a bus in a SQLite ` +
      `file only: set AGENT_BUS_DB to a file path`,
  );
  log.error(reason.message);
  return Store.unusable(label, options, reason);
}
