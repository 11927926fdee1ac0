/**
 * `openBusRuntime()`: a store and a bus, without the search engine, for
 * the short-lived processes that only read and write bus state (the
 * clients' hooks, which run on every turn and must start in a few
 * milliseconds). `lib/runtime.ts` builds every other process on it.
 *
 * @module
 */

import type { ChangeFeedOptions } from "./bus/changes.ts";
import { type Bus, type Clock, createBus } from "./bus/mod.ts";
import type { ResolvedConfig } from "./config.ts";
import type { Logger } from "./log.ts";
import { openStore, type Store } from "./store/mod.ts";

/** An open store and the bus over it. */
export interface BusRuntime {
  readonly store: Store;
  readonly bus: Bus;
}

/** Options of {@linkcode openBusRuntime}. */
export interface BusRuntimeOptions {
  log: Logger;
  /** The clock of the bus (tests). */
  now?: Clock;
  /** Change-feed options (tests: intervals, the `beforeWait` seam). */
  changes?: ChangeFeedOptions;
}

/**
 * Open the database of `config` and the bus over it. Never throws for a bad
 * database: the store reports it on every access.
 */
export function openBusRuntime(config: ResolvedConfig, options: BusRuntimeOptions): BusRuntime {
  const { log } = options;
  const store = openStore(config.dbPath, { busyTimeoutMs: config.busyTimeoutMs, log });
  const bus = createBus({ store, config, log, now: options.now, changes: options.changes });
  return { store, bus };
}

/** Release the bus's waiters and close its store. */
export function closeBusRuntime({ bus, store }: BusRuntime): void {
  bus.changes.close();
  store.close();
}
