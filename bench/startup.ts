/**
 * Start-up and idle footprint: time from spawning `deno run main.ts` to the
 * answer of `initialize`, and the resident memory of an idle server.
 *
 * @module
 */

import { startPeer } from "../tests/_helpers/peer.ts";
import { quantile } from "./_stats.ts";
import { rssMB } from "./_system.ts";

/** Median start time in ms over `runs` starts, and idle RSS in MB. */
export async function benchStartup(
  dir: string,
  runs: number,
): Promise<{ medianMs: number; idleRssMB: number }> {
  const dbPath = `${dir}/startup.sqlite`;
  const times: number[] = [];
  let idleRssMB = 0;
  for (let i = 0; i < runs + 1; i++) {
    const started = performance.now();
    const peer = await startPeer({ dbPath }); // resolves after the initialize answer
    const elapsed = performance.now() - started;
    if (i > 0) times.push(elapsed); // the first start fills Deno's code cache
    if (i === runs) {
      await peer.ok("ping");
      await peer.ok("topic_list", {});
      idleRssMB = rssMB(peer.pid);
    }
    await peer.close();
  }
  return { medianMs: quantile(times, 0.5), idleRssMB };
}
