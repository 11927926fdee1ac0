/**
 * `deno task bench [--quick]`: run the benchmarks and print one table.
 *
 * Every benchmark starts real server processes and drives them over MCP
 * stdio with the SDK client, on a temporary database.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { benchLatency } from "./latency.ts";
import { markdownTable, ms } from "./_stats.ts";

const { values } = parseArgs({ args: Deno.args, options: { quick: { type: "boolean" } } });
const quick = values.quick ?? false;
const dir = await Deno.makeTempDir({ prefix: "agent-bus-bench-" });
try {
  const latency = await benchLatency(dir, quick ? 100 : 500);
  const table = markdownTable(["metric", "target", "measured"], [
    [`delivery latency p50 (${latency.samples} samples)`, "≤ 5 ms", ms(latency.p50)],
    ["delivery latency p95", "", ms(latency.p95)],
    ["delivery latency p99", "≤ 25 ms", ms(latency.p99)],
    ["delivery latency max", "", ms(latency.max)],
  ]);
  await Deno.stdout.write(new TextEncoder().encode(table + "\n"));
} finally {
  await Deno.remove(dir, { recursive: true });
}
