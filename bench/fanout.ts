/**
 * Fan-out: one sender, many receivers each blocked in `sync` in its own
 * server process; time from the send until every receiver has the message.
 *
 * @module
 */

import { type Peer, startPeer } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution, waitForLog } from "./_stats.ts";

/** Run `rounds` fan-outs to `receivers` processes. */
export async function benchFanout(
  dir: string,
  receivers: number,
  rounds: number,
): Promise<Distribution> {
  const dbPath = `${dir}/fanout.sqlite`;
  await using sender = await startPeer({ dbPath });
  const peers: Peer[] = await Promise.all(
    Array.from(
      { length: receivers },
      () => startPeer({ dbPath, env: { AGENT_BUS_LOG_LEVEL: "debug" } }),
    ),
  );
  try {
    const topic = await sender.ok("topic_create", { name: "fanout" });
    await sender.ok("topic_join", { agent_name: "sender", topic_id: topic.topic_id });
    await Promise.all(
      peers.map((p, i) =>
        p.ok("topic_join", { agent_name: `receiver-${i}`, topic_id: topic.topic_id })
      ),
    );
    const warmup = 3;
    const times: number[] = [];
    for (let round = 0; round < rounds + warmup; round++) {
      const waits = peers.map((p) =>
        p.call("sync", { topic_id: topic.topic_id, wait_seconds: 30 })
      );
      await Promise.all(peers.map((p) => waitForLog(p, "sync waiting", round + 1)));
      const started = performance.now();
      await sender.call("sync", {
        topic_id: topic.topic_id,
        outbox: [{ content_markdown: `round ${round}` }],
        wait_seconds: 0,
      });
      const results = await Promise.all(waits);
      const elapsed = performance.now() - started;
      if (
        results.some((r) =>
          (r.structuredContent as { received_count: number }).received_count !== 1
        )
      ) {
        throw new Error(`round ${round}: a receiver missed the message`);
      }
      if (round >= warmup) times.push(elapsed);
    }
    return distribution(times);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
}
