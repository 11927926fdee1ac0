/**
 * The tail under contention: 16 server processes each send one message per
 * `sync`, all at once, and every send is timed as its agent sees it.
 *
 * @module
 */

import { startPeer } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** Per-send latency and the rate, with `processes` senders of `sends` messages each. */
export interface ContentionResult {
  processes: number;
  latency: Distribution;
  perSecond: number;
}

/** Run `processes` senders at once, `sends` one-message `sync` calls each. */
export async function benchContention(
  dir: string,
  options: { processes: number; sends: number },
): Promise<ContentionResult> {
  const dbPath = `${dir}/contention.sqlite`;
  const peers = await Promise.all(
    Array.from({ length: options.processes }, () => startPeer({ dbPath })),
  );
  try {
    const topic = await peers[0]!.ok("topic_create", { name: "contention" });
    await Promise.all(
      peers.map((p, i) => p.ok("topic_join", { agent_name: `p${i}`, topic_id: topic.topic_id })),
    );
    const times: number[] = [];
    const started = performance.now();
    await Promise.all(peers.map(async (peer, i) => {
      for (let n = 0; n < options.sends; n++) {
        const sent = performance.now();
        await peer.ok("sync", {
          topic_id: topic.topic_id,
          outbox: [{ content_markdown: `process ${i} message ${n}` }],
          max_items: 1,
          wait_seconds: 0,
        });
        times.push(performance.now() - sent);
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    return {
      processes: options.processes,
      latency: distribution(times),
      perSecond: times.length / seconds,
    };
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
}
