/**
 * Cost that does not grow with history: the 4-sender, 1-per-call
 * throughput and the cross-process delivery latency, measured in a topic
 * that already holds `stored` messages, to be set beside the same
 * benchmarks on a fresh database.
 *
 * @module
 */

import { loadHistory } from "./_history.ts";
import { benchLatency } from "./latency.ts";
import type { Distribution } from "./_stats.ts";
import { benchThroughput, type ThroughputResult } from "./throughput.ts";

/** The throughput and latency runs with history. */
export interface HistoryResult {
  stored: number;
  throughput: ThroughputResult;
  latency: Distribution;
}

async function copyDatabase(from: string, to: string): Promise<void> {
  for (const suffix of ["", "-wal"]) {
    await Deno.copyFile(`${from}${suffix}`, `${to}${suffix}`).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound) || suffix === "") throw error;
    });
  }
}

/** Load `stored` messages once, then run both benchmarks on copies of that database. */
export async function benchWithHistory(
  dir: string,
  options: { stored: number; samples: number; seconds: number },
): Promise<HistoryResult> {
  const loaded = `${dir}/history.sqlite`;
  const history = await loadHistory(loaded, options.stored);
  const forThroughput = `${dir}/history-throughput.sqlite`;
  const forLatency = `${dir}/history-latency.sqlite`;
  await copyDatabase(loaded, forThroughput);
  await copyDatabase(loaded, forLatency);
  const throughput = await benchThroughput(dir, {
    senders: 4,
    perCall: 1,
    seconds: options.seconds,
    dbPath: forThroughput,
    history,
  });
  const latency = await benchLatency(dir, options.samples, forLatency, history);
  return { stored: options.stored, throughput, latency };
}
