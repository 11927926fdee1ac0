/**
 * Full-text search latency through `messages_search` on a corpus of
 * realistic messages, at increasing sizes, plus the server's resident memory
 * once it holds them all.
 *
 * @module
 */

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
