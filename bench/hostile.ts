/**
 * Hostile input: the slowest `sync` among the pathological message bodies
 * (long runs of one character, alternating case, separators, blobs,
 * multi-byte text; 65,536 characters each), and the latency of another
 * process's sends while they are processed. Each body is sent `rounds`
 * times in one agent's process; the other agent sends small messages as fast
 * as it can meanwhile.
 *
 * @module
 */

import { PATHOLOGICAL_TEXTS } from "../tests/_helpers/pathological.ts";
import { startPeer } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** What {@linkcode benchHostile} measured. */
export interface HostileResult {
  /** The slowest pathological send, and which input it was. */
  slowest: { name: string; ms: number };
  /** Every pathological send. */
  sends: Distribution;
  /** The other process's small sends while the pathological ones ran. */
  other: Distribution;
  /** Failed calls of either process. */
  errors: number;
}

/** Send every pathological body `rounds` times while another process keeps sending. */
export async function benchHostile(dir: string, rounds: number): Promise<HostileResult> {
  const dbPath = `${dir}/hostile.sqlite`;
  await using hostile = await startPeer({ dbPath });
  await using other = await startPeer({ dbPath });
  const { topic_id } = await hostile.ok("topic_create", { name: "hostile" });
  await hostile.ok("topic_join", { agent_name: "hostile", topic_id });
  await other.ok("topic_join", { agent_name: "other", topic_id });

  let errors = 0;
  let running = true;
  const otherLatencies: number[] = [];
  const background = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      const result = await other.call("sync", {
        topic_id,
        outbox: [{ content_markdown: `beat ${i}` }],
        wait_seconds: 0,
      });
      otherLatencies.push(performance.now() - started);
      if (result.isError) errors++;
    }
  })();

  const sends: number[] = [];
  let slowest = { name: "", ms: 0 };
  for (let round = 0; round < rounds; round++) {
    for (const { name, text } of PATHOLOGICAL_TEXTS) {
      const started = performance.now();
      const result = await hostile.call("sync", {
        topic_id,
        outbox: [{ content_markdown: text }],
        wait_seconds: 0,
      });
      const elapsed = performance.now() - started;
      if (result.isError) errors++;
      sends.push(elapsed);
      if (elapsed > slowest.ms) slowest = { name, ms: elapsed };
    }
  }
  running = false;
  await background;
  return { slowest, sends: distribution(sends), other: distribution(otherLatencies), errors };
}
