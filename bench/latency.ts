/**
 * Delivery latency across processes: peer B is blocked in
 * `sync(wait_seconds=30)` in one server process; peer A sends from another.
 * Measured from A's call to B's result, as the agents see it.
 *
 * @module
 */

import { startPeer } from "../tests/_helpers/peer.ts";
import { quantile } from "./_stats.ts";

/** Latency percentiles in milliseconds. */
export interface LatencyResult {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Run the latency benchmark with `samples` round trips on a fresh database in `dir`. */
export async function benchLatency(dir: string, samples: number): Promise<LatencyResult> {
  const dbPath = `${dir}/latency.sqlite`;
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath });
  const topic = await a.ok("topic_create", { name: "latency" });
  await a.ok("topic_join", { agent_name: "sender", topic_id: topic.topic_id });
  await b.ok("topic_join", { agent_name: "receiver", topic_id: topic.topic_id });
  const times: number[] = [];
  for (let i = 0; i < samples + 10; i++) {
    const waiting = b.call("sync", { topic_id: topic.topic_id, wait_seconds: 30 });
    // Give B's call time to reach its wait: measuring a message that is already
    // there when B asks would time a plain read, not a wake-up.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    await a.call("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: `ping ${i}` }],
      wait_seconds: 0,
    });
    const result = await waiting;
    const elapsed = performance.now() - started;
    if ((result.structuredContent as { status: string }).status !== "ready") {
      throw new Error(`sample ${i}: B did not receive the message`);
    }
    if (i >= 10) times.push(elapsed); // the first rounds warm up the JIT
  }
  return {
    samples: times.length,
    p50: quantile(times, 0.5),
    p95: quantile(times, 0.95),
    p99: quantile(times, 0.99),
    max: Math.max(...times),
  };
}
