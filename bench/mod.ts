/**
 * `deno task bench [--quick]`: run the benchmarks, print one table, and
 * record it in docs/BENCHMARKS.md.
 *
 * Every benchmark starts real server processes and drives them over MCP
 * stdio with the SDK client, as agents do, on a temporary database. Each run
 * is appended to the history in docs/BENCHMARKS.md with its date, machine
 * and commit; a full run also replaces the summary at the top of that file
 * and in the README (between `<!-- bench:summary -->` markers).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { count, markdownTable, ms } from "./_stats.ts";
import { commit, machine } from "./_system.ts";
import { benchFanout } from "./fanout.ts";
import { benchIdle } from "./idle.ts";
import { benchLatency } from "./latency.ts";
import { benchSearch } from "./search.ts";
import { benchStartup } from "./startup.ts";
import { benchThroughput, type ThroughputResult } from "./throughput.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const { values } = parseArgs({ args: Deno.args, options: { quick: { type: "boolean" } } });
const quick = values.quick ?? false;
const size = (full: number, short: number) => quick ? short : full;

const progress = (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(`… ${text}\n`));
const dir = await Deno.makeTempDir({ prefix: "agent-bus-bench-" });
const startedAt = new Date();
try {
  progress("delivery latency");
  const latency = await benchLatency(dir, size(500, 100));
  progress("idle cost");
  const idle = await benchIdle(dir, 8, size(30, 5));
  const throughput: ThroughputResult[] = [];
  for (const perCall of [1, 10]) {
    for (const senders of [1, 4, 8]) {
      progress(`throughput: ${senders} sender(s), ${perCall} message(s) per call`);
      throughput.push(await benchThroughput(dir, { senders, perCall, seconds: size(10, 3) }));
    }
  }
  progress("fan-out to 16 receivers");
  const fanout = await benchFanout(dir, 16, size(100, 20));
  progress("search");
  const search = await benchSearch(dir, quick ? [10_000] : [10_000, 100_000]);
  progress("start-up");
  const startup = await benchStartup(dir, size(20, 10));

  const lost = throughput.reduce((n, t) => n + t.lost, 0);
  const duplicated = throughput.reduce((n, t) => n + t.duplicated, 0);
  const rate = (senders: number, perCall: number) => {
    const t = throughput.find((r) => r.senders === senders && r.perCall === perCall)!;
    return `${count(t.perSecond)} msg/s`;
  };
  const at100k = search.points.find((p) => p.messages === 100_000);
  const verdict = (ok: boolean) => ok ? "✅" : "❌";

  const summary: [string, string, string, boolean | undefined][] = [
    ["Delivery latency p50 (cross-process)", "≤ 5 ms", ms(latency.p50), latency.p50 <= 5],
    ["Delivery latency p99", "≤ 25 ms", ms(latency.p99), latency.p99 <= 25],
    [
      `Idle: commits by 8 waiting peers in ${Math.round(idle.seconds)} s`,
      "0",
      String(idle.commits),
      idle.commits === 0,
    ],
    [
      "Idle: CPU per waiting server (max)",
      "< 1 %",
      `${idle.cpuPercentMax.toFixed(2)} %`,
      idle.cpuPercentMax < 1,
    ],
    [
      "Throughput, 4 senders, 10 messages per call",
      "≥ 5,000 msg/s",
      rate(4, 10),
      throughputOf(4, 10) >= 5000,
    ],
    [
      "Throughput, 4 senders, 1 message per call",
      "≥ 5,000 msg/s",
      rate(4, 1),
      throughputOf(4, 1) >= 5000,
    ],
    [
      "Messages lost / duplicated (all throughput runs)",
      "0 / 0",
      `${lost} / ${duplicated}`,
      lost === 0 && duplicated === 0,
    ],
    [
      "Search p50, fts, 100k messages",
      "≤ 5 ms",
      at100k ? ms(at100k.latency.p50) : "not run (--quick)",
      at100k ? at100k.latency.p50 <= 5 : undefined,
    ],
    [
      "Start to `initialize` answer (median)",
      "≤ 150 ms",
      ms(startup.medianMs),
      startup.medianMs <= 150,
    ],
    [
      "RSS, idle server",
      "≤ 80 MB",
      `${startup.idleRssMB.toFixed(1)} MB`,
      startup.idleRssMB <= 80,
    ],
    [
      `RSS after ${count(search.points.at(-1)!.messages)} messages and searches`,
      "≤ 80 MB",
      `${search.rssMB.toFixed(1)} MB`,
      search.rssMB <= 80,
    ],
  ];
  function throughputOf(senders: number, perCall: number): number {
    return throughput.find((r) => r.senders === senders && r.perCall === perCall)!.perSecond;
  }

  const details: string[][] = [
    [
      `Delivery latency p50 / p95 / p99 / max (${latency.samples} samples)`,
      `${ms(latency.p50)} / ${ms(latency.p95)} / ${ms(latency.p99)} / ${ms(latency.max)}`,
    ],
    [
      `Idle (8 peers, ${Math.round(idle.seconds)} s): commits seen, WAL growth`,
      `${idle.commits}, ${idle.walBytesGrown} bytes`,
    ],
    [
      "Idle: CPU per server, max / mean",
      `${idle.cpuPercentMax.toFixed(2)} % / ${idle.cpuPercentMean.toFixed(2)} %`,
    ],
    ...throughput.map((t) => [
      `Throughput, ${t.senders} sender(s), ${t.perCall} per call (${Math.round(t.seconds)} s)`,
      `${count(t.perSecond)} msg/s (${
        count(t.sent)
      } sent, ${t.lost} lost, ${t.duplicated} duplicated)`,
    ]),
    [
      `Fan-out to 16 receivers, all delivered, p50 / p99 (${fanout.samples} rounds)`,
      `${ms(fanout.p50)} / ${ms(fanout.p99)}`,
    ],
    ...search.points.map((p) => [
      `Search fts at ${count(p.messages)} messages, p50 / p99 (${p.latency.samples} queries)`,
      `${ms(p.latency.p50)} / ${ms(p.latency.p99)}`,
    ]),
    [
      "Loading the search corpus through sync (50 per call)",
      `${count(search.points.at(-1)!.messages / search.loadSeconds)} msg/s`,
    ],
    ["Start to initialize, median", ms(startup.medianMs)],
    [
      "RSS idle / after the search corpus",
      `${startup.idleRssMB.toFixed(1)} MB / ${search.rssMB.toFixed(1)} MB`,
    ],
  ];

  const summaryTable = markdownTable(
    ["metric", "target", "measured", ""],
    summary.map((
      [metric, target, measured, ok],
    ) => [metric, target, measured, ok === undefined ? "" : verdict(ok)]),
  );
  const detailTable = markdownTable(["measurement", "result"], details);
  await Deno.stdout.write(new TextEncoder().encode(`${summaryTable}\n\n${detailTable}\n`));

  const m = machine();
  const sha = await commit();
  const when = startedAt.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  const heading = `${when} · ${quick ? "quick" : "full"} run · commit ${sha} · ${m.cores} cores, ` +
    `${m.memoryGiB} GiB RAM, ${m.cpu}, ${m.os}, Deno ${m.deno}`;
  await record({ heading, summaryTable, detailTable, full: !quick });
  progress(`recorded in docs/BENCHMARKS.md${quick ? "" : " and the README summary"}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}

/** Append the run to docs/BENCHMARKS.md; a full run also refreshes both summaries. */
async function record(
  run: { heading: string; summaryTable: string; detailTable: string; full: boolean },
) {
  const docPath = `${ROOT}docs/BENCHMARKS.md`;
  await Deno.mkdir(`${ROOT}docs`, { recursive: true });
  let doc: string;
  try {
    doc = await Deno.readTextFile(docPath);
  } catch {
    doc = `# Benchmarks

Measured by \`deno task bench\` (\`--quick\` for a short run): real server processes driven over
MCP stdio by the SDK client, on a temporary database. Figures depend on the machine; each run
says which one it ran on. The summary shows the latest full run; every run is kept below.

<!-- bench:summary -->
<!-- /bench:summary -->

## Runs
`;
  }
  const block =
    `<!-- bench:summary -->\nLatest full run: ${run.heading}\n\n${run.summaryTable}\n<!-- /bench:summary -->`;
  if (run.full) doc = replaceSummary(doc, block);
  doc = `${doc.trimEnd()}\n\n### ${run.heading}\n\n${run.summaryTable}\n\n${run.detailTable}\n`;
  await Deno.writeTextFile(docPath, doc);
  if (run.full) {
    const readmePath = `${ROOT}README.md`;
    const readme = await Deno.readTextFile(readmePath);
    await Deno.writeTextFile(readmePath, replaceSummary(readme, block));
  }
}

function replaceSummary(text: string, block: string): string {
  return text.replace(/<!-- bench:summary -->[\s\S]*?<!-- \/bench:summary -->/, block);
}
