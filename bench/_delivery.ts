/**
 * The loop shared by the "an agent posts, another process shows it"
 * benchmarks: post one message at a time through an agent's MCP server and
 * time each until the observer reports it, checking that it is that message.
 *
 * @module
 */

import type { Peer } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution } from "./_stats.ts";

/**
 * Post `samples` messages (after 10 unmeasured ones) and time each from the
 * agent's `sync` call until `observe()` returns its body.
 */
export async function timeDeliveries(
  agent: Peer,
  topicId: string,
  samples: number,
  observe: () => Promise<string>,
): Promise<Distribution> {
  const times: number[] = [];
  const warmup = 10;
  for (let i = 0; i < samples + warmup; i++) {
    const started = performance.now();
    await agent.ok("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: `tick ${i}` }],
      wait_seconds: 0,
    });
    const body = await observe();
    const elapsed = performance.now() - started;
    if (body !== `tick ${i}`) throw new Error(`observed ${body}, not tick ${i}`);
    if (i >= warmup) times.push(elapsed);
  }
  return distribution(times);
}
