/**
 * An in-process runtime (bus and search engine) on a real SQLite file, for
 * tests of `lib/bus` and `lib/search` that do not need a server process.
 *
 * @module
 */

import type { ChangeFeedOptions } from "../../lib/bus/changes.ts";
import type { Bus } from "../../lib/bus/mod.ts";
import { joinTopic } from "../../lib/bus/names.ts";
import { Session } from "../../lib/bus/session.ts";
import { sync } from "../../lib/bus/sync.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { type Env, loadConfig } from "../../lib/config.ts";
import { createLogger } from "../../lib/log.ts";
import { SearchEngine } from "../../lib/search/mod.ts";
import { openRuntime, type Runtime } from "../../lib/runtime.ts";
import { storeLocation } from "./store.ts";

/** A bus whose runtime closes when disposed (`await using`). */
export interface TestBus extends Bus, AsyncDisposable {
  runtime: Runtime;
}

/**
 * Open a runtime on `dbPath` with config from `env` (by default a closed
 * embedding endpoint, so semantic search is unavailable) and change-feed
 * options (e.g. a test seam), and return its bus.
 */
export function openTestBus(
  dbPath: string,
  env: Env = {},
  options: { changes?: ChangeFeedOptions; now?: () => number } = {},
): TestBus {
  const { config } = loadConfig({
    AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
    ...env,
    AGENT_BUS_DB: storeLocation(dbPath),
  });
  const runtime = openRuntime(config, {
    log: createLogger("error"),
    changes: options.changes,
    now: options.now,
  });
  return { ...runtime.bus, runtime, [Symbol.asyncDispose]: () => runtime.close() };
}

/**
 * A search engine over a test bus. Its endpoint is `AGENT_BUS_EMBEDDINGS_URL`
 * from `env` (by default a closed port, so semantic search is unavailable).
 * The background loop is not started: tests call `indexer.runOnce()`.
 */
export function openTestSearch(bus: TestBus, env: Env = {}): SearchEngine & AsyncDisposable {
  const { config } = loadConfig({
    AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
    ...env,
    AGENT_BUS_DB: bus.store.path,
  });
  const engine = new SearchEngine({ store: bus.store, config, log: bus.log });
  return Object.assign(engine, { [Symbol.asyncDispose]: () => engine.close() });
}

/** Run the indexer until it has nothing left to do. */
export async function indexAll(engine: SearchEngine): Promise<void> {
  for (let round = 0; round < 10_000; round++) {
    if (!(await engine.indexer.runOnce())) return;
  }
  throw new Error("the indexer never finished");
}

/** Create a topic and post `bodies` into it as `sender`; returns the topic id. */
export async function seedTopic(
  bus: Bus,
  name: string,
  bodies: (string | { content_markdown: string; message_type?: string })[],
  sender = `writer-${crypto.randomUUID().slice(0, 6)}`,
): Promise<string> {
  const { topic } = await createTopic(bus, { name, mode: "reuse" });
  const session = new Session();
  await joinTopic(bus, session, { agentName: sender, topicId: topic.topic_id, allowClosed: false });
  await sync(bus, session.require(topic.topic_id), {
    topicId: topic.topic_id,
    outbox: bodies.map((b) => typeof b === "string" ? { content_markdown: b } : b),
    maxItems: 1,
    includeSelf: false,
    waitSeconds: 0,
    autoAdvance: true,
  });
  return topic.topic_id;
}
