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
import type { Bus, Clock } from "./bus/mod.ts";
import { closeBusRuntime, openBusRuntime } from "./bus_runtime.ts";
import type { ConfigWarning, ResolvedConfig } from "./config.ts";
import type { Logger } from "./log.ts";
import { SearchEngine } from "./search/mod.ts";
import { type CopiedTable, copyBus, type CopyProgress } from "./store/copy.ts";
import { openStore, type Store, type StoreOptions } from "./store/mod.ts";

export { inspectDatabaseFile, sqliteFeatures } from "./store/inspect.ts";
export type { CopiedTable } from "./store/copy.ts";
export {
  isPostgresUrl,
  type MigrationState,
  type PostgresProbe,
  probePostgres,
  readMigrationState,
  sessionSettings,
  wipeDatabase,
} from "./store/mod.ts";

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
  /** What was wrong with the configuration: logged here, once, as the process opens its bus. */
  configWarnings?: readonly ConfigWarning[];
}

/**
 * Open the database of `config`, and the bus and search engine over it.
 * Never throws for a bad database: the store reports it on every access and
 * keeps trying to recover (see `lib/store/mod.ts`).
 */
export function openRuntime(config: ResolvedConfig, options: RuntimeOptions): Runtime {
  const { log } = options;
  for (const warning of options.configWarnings ?? []) log.warn(warning.message);
  const opened = openBusRuntime(config, options);
  const { store, bus } = opened;
  const search = new SearchEngine({ store, config, log, fetch: options.fetch });
  if (options.indexing) search.start();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      bus.changes.close(); // release waiters before the indexer stops
      await search.close();
      closeBusRuntime(opened);
    })();
    return closing;
  };
  return { store, bus, search, close, [Symbol.asyncDispose]: close };
}

/**
 * Copy the whole bus at `from` into the empty store at `to` (file paths or
 * `postgres://` URLs, either way), then compare their row counts.
 *
 * @throws {BusError} when either store is unusable, `to` is not empty, or the counts differ
 */
export async function copyDatabase(
  from: string,
  to: string,
  options: StoreOptions & { onProgress?: CopyProgress },
): Promise<CopiedTable[]> {
  const source = openStore(from, options);
  const target = openStore(to, options);
  try {
    const failure = source.check() ?? target.check();
    if (failure) throw failure;
    return await copyBus(source, target, options.onProgress);
  } finally {
    source.close();
    target.close();
  }
}
