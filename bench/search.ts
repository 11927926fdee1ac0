/**
 * Full-text search latency through `messages_search` on a corpus of
 * realistic messages, at increasing sizes, plus the server's resident memory
 * once it holds them all; and search latency while another program holds
 * the write lock (reads never wait for writers).
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { startPeer } from "../tests/_helpers/peer.ts";
import { corpus, SEARCH_QUERIES } from "./_corpus.ts";
import { type Distribution, distribution } from "./_stats.ts";
import { rssMB } from "./_system.ts";

/** Latency at one corpus size. */
export interface SearchPoint {
  messages: number;
  latency: Distribution;
}

/** Search latencies at each size in `sizes`, and the server's RSS at the end. */
export async function benchSearch(
  dir: string,
  sizes: number[],
): Promise<{ points: SearchPoint[]; rssMB: number; loadSeconds: number }> {
  const dbPath = `${dir}/search.sqlite`;
  await using peer = await startPeer({ dbPath });
  const topics: string[] = [];
  for (let t = 0; t < 10; t++) {
    const topic = await peer.ok("topic_create", { name: `project-${t}` });
    await peer.ok("topic_join", { agent_name: "writer", topic_id: topic.topic_id });
    topics.push(topic.topic_id as string);
  }
  const next = corpus();
  const points: SearchPoint[] = [];
  let loaded = 0;
  let loadSeconds = 0;
  for (const target of sizes) {
    const started = performance.now();
    while (loaded < target) {
      const batch = Math.min(50, target - loaded);
      const result = await peer.call("sync", {
        topic_id: topics[loaded % topics.length],
        outbox: Array.from({ length: batch }, () => ({ content_markdown: next() })),
        max_items: 1,
        wait_seconds: 0,
      });
      if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
      loaded += batch;
    }
    loadSeconds += (performance.now() - started) / 1000;
    const times: number[] = [];
    for (let round = 0; round < 9; round++) {
      for (const query of SEARCH_QUERIES) {
        const started = performance.now();
        const result = await peer.call("messages_search", { query, mode: "fts", limit: 20 });
        const elapsed = performance.now() - started;
        if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
        if (round > 0) times.push(elapsed); // round 0 warms caches
      }
    }
    points.push({ messages: loaded, latency: distribution(times) });
  }
  return { points, rssMB: rssMB(peer.pid), loadSeconds };
}

/** Search latency with and without another program holding the write lock. */
export interface LockedSearch {
  messages: number;
  free: Distribution;
  locked: Distribution;
  /** Searches answered with an error (DB_BUSY or other) while the lock was held. */
  errors: number;
}

/**
 * `messages_search` on `messages` stored messages, first as usual, then while
 * another program holds SQLite's write lock (`BEGIN IMMEDIATE` on its own
 * connection) right after 200 more messages were sent, so the searches also
 * cover messages the indexer has not written yet.
 */
export async function benchSearchUnderLock(dir: string, messages: number): Promise<LockedSearch> {
  const dbPath = `${dir}/search-locked.sqlite`;
  await using peer = await startPeer({
    dbPath,
    env: { AGENT_BUS_BUSY_TIMEOUT_MS: "2000" },
  });
  const topic = await peer.ok("topic_create", { name: "locked" });
  await peer.ok("topic_join", { agent_name: "writer", topic_id: topic.topic_id });
  const next = corpus();
  const send = async (count: number) => {
    for (let sent = 0; sent < count; sent += 50) {
      const result = await peer.call("sync", {
        topic_id: topic.topic_id,
        outbox: Array.from(
          { length: Math.min(50, count - sent) },
          () => ({ content_markdown: next() }),
        ),
        max_items: 1,
        wait_seconds: 0,
      });
      if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
    }
  };
  await send(messages);
  const round = async (): Promise<{ times: number[]; errors: number }> => {
    const times: number[] = [];
    let errors = 0;
    for (let pass = 0; pass < 5; pass++) {
      for (const query of SEARCH_QUERIES) {
        const started = performance.now();
        const result = await peer.call("messages_search", { query, mode: "fts", limit: 20 });
        times.push(performance.now() - started);
        if (result.isError) errors++;
      }
    }
    return { times, errors };
  };
  await round(); // warm caches
  const free = await round();
  await send(200);
  const holder = new DatabaseSync(dbPath);
  holder.exec("BEGIN IMMEDIATE");
  try {
    const locked = await round();
    return {
      messages: messages + 200,
      free: distribution(free.times),
      locked: distribution(locked.times),
      errors: locked.errors,
    };
  } finally {
    holder.exec("ROLLBACK");
    holder.close();
  }
}
