/**
 * The bus: the contract rules of Agent Bus v6.3 over the store.
 *
 * Nothing in `lib/bus` knows MCP or SQL. Its functions take a {@linkcode Bus}
 * (the process's store, config, change feed and clock) and plain arguments,
 * enforce the seed's rules, and throw `BusError`s with the seed's codes.
 *
 * @module
 */

import type { ResolvedConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import { DEADLINE_MARGIN_MS, withCallDeadline } from "../store/call_deadline.ts";
import { ChangeFeed, type ChangeFeedOptions } from "./changes.ts";

/** Wall-clock time in unix seconds (the unit of every `*_at` column). */
export type Clock = () => number;

/** Everything the bus functions need, made once per process. */
export interface Bus {
  readonly store: Store;
  readonly config: ResolvedConfig;
  readonly changes: ChangeFeed;
  readonly now: Clock;
  readonly log: Logger;
}

/**
 * Assemble a bus over an open store.
 *
 * @param deps the store, config and logger; `now` defaults to the system clock
 */
export function createBus(
  deps: {
    store: Store;
    config: ResolvedConfig;
    log: Logger;
    now?: Clock;
    changes?: ChangeFeedOptions;
  },
): Bus {
  return {
    store: deps.store,
    config: deps.config,
    log: deps.log,
    now: deps.now ?? (() => Date.now() / 1000),
    changes: new ChangeFeed(deps.store, deps.changes),
  };
}

/**
 * Run `fn` as one call (a tool call, a REST request): on PostgreSQL its
 * database work, however many steps, ends within one deadline,
 * `AGENT_BUS_BUSY_TIMEOUT_MS` + 2 s (`store/call_deadline.ts`). SQLite
 * has no network to wait on: its calls run as they are.
 */
export function asCall<T>(bus: Bus, fn: () => Promise<T>): Promise<T> {
  if (bus.store.engine !== "postgres") return fn();
  return withCallDeadline(bus.config.busyTimeoutMs + DEADLINE_MARGIN_MS, fn);
}

/**
 * Run a write transaction and wake this process's waiters after it commits;
 * `topics` (its own topic, for a send) when the write changes only their
 * state, so that waiters on other topics are left alone.
 */
export async function write<T>(
  bus: Bus,
  fn: () => T,
  options: { topics?: readonly string[] } = {},
): Promise<T> {
  const result = await bus.store.immediate(fn, options);
  bus.changes.notify(options.topics);
  return result;
}
