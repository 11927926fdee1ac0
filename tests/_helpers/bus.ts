/**
 * An in-process bus on a real SQLite file, for tests of `lib/bus` and
 * `lib/search` that do not need a server process.
 *
 * @module
 */

import { type Bus, createBus } from "../../lib/bus/mod.ts";
import { type Env, loadConfig } from "../../lib/config.ts";
import { createLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/mod.ts";

/** A bus that closes its store when disposed. */
export interface TestBus extends Bus, Disposable {}

/** Open a bus on `dbPath` with config from `env`. */
export function openTestBus(dbPath: string, env: Env = {}): TestBus {
  const { config } = loadConfig({ ...env, AGENT_BUS_DB: dbPath });
  const log = createLogger("error");
  const store = openStore(config.dbPath, { busyTimeoutMs: config.busyTimeoutMs, log });
  const bus = createBus({ store, config, log });
  return {
    ...bus,
    [Symbol.dispose]() {
      bus.changes.close();
      store.close();
    },
  };
}
