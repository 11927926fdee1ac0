/**
 * Delivery latency across processes: peer B is blocked in
 * `sync(wait_seconds=30)` in one server process; peer A sends from another.
 * Measured from A's call to B's result, as the agents see it.
 *
 * @module
 */

import { startPeer } from "../tests/_helpers/peer.ts";
import { type History, joinAtEnd } from "./_history.ts";
import { type Distribution, distribution, waitForLog } from "./_stats.ts";

/**
 * Run `samples` round trips on a fresh database in `dir` (or on the store
 * `dbPath`; with `history`, in that database's long topic).
 */
export async function benchLatency(
  dir: string,
  samples: number,
  dbPath = `${dir}/latency.sqlite`,
  history?: History,
): Promise<Distribution> {
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath, env: { AGENT_BUS_LOG_LEVEL: "debug" } });
  const topic = await a.ok("topic_create", { name: history?.topicName ?? "latency" });
  await joinAtEnd(a, topic.topic_id as string, "sender", history);
  await joinAtEnd(b, topic.topic_id as string, "receiver", history);
  const warmup = 20;
  const times: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const waiting = b.call("sync", { topic_id: topic.topic_id, wait_seconds: 30 });
    await waitForLog(b, "sync waiting", i + 1); // B is really blocked before A sends
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
    if (i >= warmup) times.push(elapsed);
  }
  return distribution(times);
}
