/**
 * The benchmark report: the summary against the targets, the detailed
 * measurements, and how both are recorded in docs/BENCHMARKS.md with the
 * run's picture in docs/bench/ (and, for a full run, in docs/PERFORMANCE.md's
 * summary and docs/bench/latest.svg).
 *
 * @module
 */

import type { ResidentResult } from "./resident.ts";
import type { CommitHold } from "./commit_hold.ts";
import { fileURLToPath } from "node:url";
import type { ChatThroughput } from "./chatbus.ts";
import type { LockedSearch } from "./search.ts";
import type { LoopTally } from "../tests/_helpers/chat.ts";
import type { ContentionResult } from "./contention.ts";
import type { HistoryResult } from "./history.ts";
import type { HooksResult } from "./hooks.ts";
import type { HostileResult } from "./hostile.ts";
import type { IdleResult } from "./idle.ts";
import type { MailboxResult } from "./mailbox.ts";
import type { PostgresResult } from "./postgres.ts";
import type { StallResult } from "./stall.ts";
import type { QualityResult } from "./quality.ts";
import type { SearchPoint } from "./search.ts";
import { count, type Distribution, markdownTable, ms, quantile } from "./_stats.ts";
import type { ThroughputResult } from "./throughput.ts";
import type { SecretsCost } from "./secrets.ts";
import type { StreamsResult } from "./streams.ts";

/** Everything one run measured. */
export interface BenchResults {
  latency: Distribution;
  idle: IdleResult;
  throughput: ThroughputResult[];
  history: HistoryResult;
  contention: ContentionResult;
  fanout: Distribution;
  mailbox: MailboxResult;
  answer: Distribution;
  watch: Distribution;
  events: Distribution;
  search: { points: SearchPoint[]; rssMB: number; loadSeconds: number };
  lockedSearch: LockedSearch;
  startup: { medianMs: number; idleRssMB: number };
  hooks: HooksResult;
  scan: Distribution;
  quality: QualityResult;
  hostile: HostileResult;
  chat: { latency: Distribution; throughput: ChatThroughput[]; fairness: LoopTally };
  /** Absent where PostgreSQL is not installed. */
  postgres: PostgresResult | undefined;
  /** The stall across network namespaces, or why it did not run. */
  stall: StallResult | string;
}

type Row = [metric: string, target: string, measured: string, met: boolean | undefined];

/** A ratio as a whole percentage. */
const percent = (ratio: number) => `${Math.round(ratio * 100)} %`;

/** The summary rows of the PostgreSQL store (one "not run" row without PostgreSQL). */
function postgresRows(pg: PostgresResult | undefined): Row[] {
  if (!pg) return [["PostgreSQL store", "", "not run: PostgreSQL is not installed", undefined]];
  const t = pg.throughput;
  const four = pg.fourTopics;
  // Each waiting process checks its LISTEN connection with one NOTIFY every 2 s.
  const probes = pg.idle.peers * Math.ceil(pg.idle.seconds / 2);
  return [
    [
      "PostgreSQL: delivery p50 / p99 (cross-process)",
      "≤ 10 ms p50",
      `${ms(pg.latency.p50)} / ${ms(pg.latency.p99)}`,
      pg.latency.p50 <= 10,
    ],
    [
      "PostgreSQL: throughput, 4 senders × 10 per call, one topic",
      "",
      `${count(t.perSecond)} msg/s`,
      undefined,
    ],
    [
      "PostgreSQL: throughput, 4 senders × 10 per call, four topics",
      "≥ 2,000 msg/s and ≥ 3 × one topic",
      `${count(four.perSecond)} msg/s (${(four.perSecond / t.perSecond).toFixed(2)} ×)`,
      four.perSecond >= 2000 && four.perSecond >= 3 * t.perSecond,
    ],
    [
      "PostgreSQL: messages lost / duplicated",
      "0 / 0",
      `${t.lost + four.lost} / ${t.duplicated + four.duplicated}`,
      t.lost + four.lost === 0 && t.duplicated + four.duplicated === 0,
    ],
    [
      "PostgreSQL: delivery between two `agent-bus http` nodes, p50 / p99",
      "",
      `${ms(pg.nodes.p50)} / ${ms(pg.nodes.p99)}`,
      undefined,
    ],
    [
      "PostgreSQL: two `agent-bus http` nodes vs one, 4 sessions × 10 per call, four topics",
      "≥ 1.6 ×, 0 lost",
      `${(pg.nodeThroughput.two.perSecond / pg.nodeThroughput.one.perSecond).toFixed(2)} × (${
        count(pg.nodeThroughput.two.perSecond)
      } vs ${count(pg.nodeThroughput.one.perSecond)} msg/s); ${
        pg.nodeThroughput.one.lost + pg.nodeThroughput.two.lost
      } lost`,
      pg.nodeThroughput.two.perSecond >= 1.6 * pg.nodeThroughput.one.perSecond &&
      pg.nodeThroughput.one.lost + pg.nodeThroughput.two.lost === 0,
    ],
    [
      `PostgreSQL: queries by ${pg.idle.peers} waiting peers in ${pg.idle.seconds} s`,
      `≤ ${probes} (the listeners' checks)`,
      String(pg.idle.queries),
      pg.idle.queries <= probes,
    ],
  ];
}

/** The summary rows of the stall of one host's path to PostgreSQL. */
function stallRows(stall: StallResult | string): Row[] {
  if (typeof stall === "string") {
    return [["PostgreSQL: a stall of one host's path", "", `not run: ${stall}`, undefined]];
  }
  return [
    [
      `PostgreSQL: during a ${stall.seconds} s stall of one host's path, the other host's sends, p99; lost`,
      "≤ 100 ms; 0",
      `${ms(stall.otherSend.p99)} (p50 ${
        ms(stall.otherSend.p50)
      }, ${stall.otherSend.samples} sends); ${stall.lost}`,
      stall.otherSend.p99 <= 100 && stall.lost === 0,
    ],
    [
      `PostgreSQL: during that stall, \`ping\` on the stalled host's busy stdio server, p99`,
      "≤ 100 ms",
      `${ms(stall.stalledPing.p99)} (p50 ${ms(stall.stalledPing.p50)}, max ${
        ms(stall.stalledPing.max)
      })`,
      stall.stalledPing.p99 <= 100,
    ],
    [
      `PostgreSQL: during that stall, \`ping\` on another session of the stalled host's HTTP node, p99`,
      "≤ 100 ms",
      `${ms(stall.nodePing.p99)} (p50 ${ms(stall.nodePing.p50)}, max ${ms(stall.nodePing.max)})`,
      stall.nodePing.p99 <= 100,
    ],
  ];
}

/** The summary table: each target, what was measured, and whether it was met. */
export function summaryTable(r: BenchResults): string {
  const rate = (senders: number, perCall: number) =>
    r.throughput.find((t) => t.senders === senders && t.perCall === perCall)!.perSecond;
  const chatRate = (agents: number, stored: number) =>
    r.chat.throughput.find((t) => t.agents === agents && t.stored === stored)!.perSecond;
  const chatStored = Math.max(...r.chat.throughput.map((t) => t.stored));
  const chatLost = r.chat.throughput.reduce((sum, t) => sum + t.lost, 0);
  const fair = r.chat.fairness;
  const fairTotal = fair.posts.reduce((sum, n) => sum + n, 0);
  const chatDuplicated = r.chat.throughput.reduce((sum, t) => sum + t.duplicated, 0);
  const lost = r.throughput.reduce((n, t) => n + t.lost, 0) + r.history.throughput.lost;
  const duplicated = r.throughput.reduce((n, t) => n + t.duplicated, 0) +
    r.history.throughput.duplicated;
  // Speed kept with the history: its throughput over the fresh one, the fresh latency over its.
  const keptThroughput = r.history.throughput.perSecond / rate(4, 1);
  const keptLatency = r.latency.p50 / r.history.latency.p50;
  const at100k = r.search.points.find((p) => p.messages === 100_000);
  const fts = r.quality.modes.find((m) => m.mode === "fts")!;
  const hybrid = r.quality.modes.find((m) => m.mode === "hybrid");
  const rows: Row[] = [
    ["Delivery latency p50 (cross-process)", "≤ 5 ms", ms(r.latency.p50), r.latency.p50 <= 5],
    ["Delivery latency p99", "≤ 25 ms", ms(r.latency.p99), r.latency.p99 <= 25],
    [
      `Idle: commits by ${r.idle.peers} waiting peers in ${Math.round(r.idle.seconds)} s`,
      "0",
      String(r.idle.commits),
      r.idle.commits === 0,
    ],
    [
      "Idle: CPU per waiting server (max)",
      "< 1 %",
      `${r.idle.cpuPercentMax.toFixed(2)} %`,
      r.idle.cpuPercentMax < 1,
    ],
    [
      "Throughput, 4 senders, 10 messages per call",
      "≥ 5,000 msg/s",
      `${count(rate(4, 10))} msg/s`,
      rate(4, 10) >= 5000,
    ],
    [
      "Throughput, 4 senders, 1 message per call",
      "≥ 5,000 msg/s",
      `${count(rate(4, 1))} msg/s`,
      rate(4, 1) >= 5000,
    ],
    [
      `Throughput with ${count(r.history.stored)} messages stored (4 senders, 1 per call)`,
      "≥ 90 % of fresh",
      `${count(r.history.throughput.perSecond)} msg/s (${percent(keptThroughput)})`,
      keptThroughput >= 0.9,
    ],
    [
      `Delivery p50 with ${count(r.history.stored)} messages stored`,
      "≥ 90 % of fresh",
      `${ms(r.history.latency.p50)} (${percent(keptLatency)})`,
      keptLatency >= 0.9,
    ],
    [
      `${r.contention.processes} processes sending at once: per send p99`,
      "≤ 50 ms",
      ms(r.contention.latency.p99),
      r.contention.latency.p99 <= 50,
    ],
    [
      "Messages lost / duplicated (all throughput runs)",
      "0 / 0",
      `${lost} / ${duplicated}`,
      lost === 0 && duplicated === 0,
    ],
    [
      `HTTP mailboxes, ${r.mailbox.clients} clients, send + check_mail`,
      "≥ 2,000 pops/s",
      `${count(r.mailbox.popsPerSecond)} pops/s`,
      r.mailbox.popsPerSecond >= 2000,
    ],
    [
      "HTTP mailboxes: messages lost / duplicated",
      "0 / 0",
      `${r.mailbox.lost} / ${r.mailbox.duplicated}`,
      r.mailbox.lost === 0 && r.mailbox.duplicated === 0,
    ],
    [
      "Slowest send of a pathological 64 KiB body",
      "≤ 100 ms",
      ms(r.hostile.slowest.ms),
      r.hostile.slowest.ms <= 100 && r.hostile.errors === 0,
    ],
    [
      "Another process's send meanwhile (max)",
      "≤ 100 ms",
      ms(r.hostile.other.max),
      r.hostile.other.max <= 100,
    ],
    [
      "Chatbus: msg_post → parked msg_wait, other process (p50)",
      "≤ 5 ms",
      ms(r.chat.latency.p50),
      r.chat.latency.p50 <= 5,
    ],
    [
      "Chatbus: strict-protocol posts, 1 agent",
      "≥ 1,000 msg/s",
      `${count(chatRate(1, 0))} msg/s`,
      chatRate(1, 0) >= 1000,
    ],
    [
      `Chatbus: the same with ${count(chatStored)} messages stored`,
      "≥ 90 % of fresh",
      `${count(chatRate(1, chatStored))} msg/s (${
        Math.round(chatRate(1, chatStored) / chatRate(1, 0) * 100)
      } %)`,
      chatRate(1, chatStored) >= 0.9 * chatRate(1, 0),
    ],
    [
      "Chatbus: 4 agents racing, the smallest share of posts",
      "≥ 15 %",
      percent(Math.min(...fair.posts) / fairTotal),
      Math.min(...fair.posts) >= 0.15 * fairTotal,
    ],
    [
      "Chatbus: posts lost / duplicated (all runs)",
      "0 / 0",
      `${chatLost} / ${chatDuplicated}`,
      chatLost === 0 && chatDuplicated === 0,
    ],
    ["`agent-bus watch` shows a message (p99)", "≤ 100 ms", ms(r.watch.p99), r.watch.p99 <= 100],
    ["Web console event after a commit (p99)", "≤ 100 ms", ms(r.events.p99), r.events.p99 <= 100],
    [
      "Search p50, fts, 100k messages",
      "≤ 5 ms",
      at100k ? ms(at100k.latency.p50) : "not run (--quick)",
      at100k ? at100k.latency.p50 <= 5 : undefined,
    ],
    [
      "Search p99, fts, 100k messages",
      "≤ 20 ms",
      at100k ? ms(at100k.latency.p99) : "not run (--quick)",
      at100k ? at100k.latency.p99 <= 20 : undefined,
    ],
    [
      `Full-text search p99 while another program holds the write lock (${
        count(r.lockedSearch.messages)
      } messages); errors`,
      "≤ 2 × free p99; 0",
      `${ms(r.lockedSearch.locked.p99)} (free ${
        ms(r.lockedSearch.free.p99)
      }); ${r.lockedSearch.errors}`,
      r.lockedSearch.errors === 0 &&
      r.lockedSearch.locked.p99 <= 2 * Math.max(r.lockedSearch.free.p99, 1),
    ],
    ["Vector scan, 100k × 768 dims, one core (p50)", "≤ 30 ms", ms(r.scan.p50), r.scan.p50 <= 30],
    hybrid
      ? [
        "Search quality, nDCG@10 hybrid vs fts",
        "hybrid ≥ fts",
        `${hybrid.ndcgAt10.toFixed(3)} vs ${fts.ndcgAt10.toFixed(3)}`,
        hybrid.ndcgAt10 >= fts.ndcgAt10,
      ]
      : [
        "Search quality, nDCG@10 hybrid vs fts",
        "hybrid ≥ fts",
        "no endpoint: fts only",
        undefined,
      ],
    [
      "Start to `initialize` answer (median)",
      "≤ 150 ms",
      ms(r.startup.medianMs),
      r.startup.medianMs <= 150,
    ],
    [
      "Hook run time p50 / p99 (stop hook that blocks, spawned like a client)",
      "≤ 50 ms p99",
      `${ms(r.hooks.stop.p50)} / ${ms(r.hooks.stop.p99)}`,
      r.hooks.stop.p99 <= 50,
    ],
    [
      "RSS, idle server",
      "≤ 80 MB",
      `${r.startup.idleRssMB.toFixed(1)} MB`,
      r.startup.idleRssMB <= 80,
    ],
    [
      `RSS after ${count(r.search.points.at(-1)!.messages)} messages and searches`,
      "≤ 80 MB",
      `${r.search.rssMB.toFixed(1)} MB`,
      r.search.rssMB <= 80,
    ],
    ...postgresRows(r.postgres),
    ...stallRows(r.stall),
  ];
  return markdownTable(
    ["metric", "target", "measured", ""],
    rows.map((
      [metric, target, measured, met],
    ) => [metric, target, measured, met === undefined ? "" : met ? "✅" : "❌"]),
  );
}

/** Every measurement of the run. */
export function detailTable(r: BenchResults): string {
  const { latency, idle, fanout, mailbox, answer, watch, events, search, startup, scan, quality } =
    r;
  const rows: string[][] = [
    [
      `Delivery latency p50 / p95 / p99 / max (${latency.samples} samples)`,
      `${ms(latency.p50)} / ${ms(latency.p95)} / ${ms(latency.p99)} / ${ms(latency.max)}`,
    ],
    [
      `With ${count(r.history.stored)} messages stored: throughput 4 senders × 1 (${
        Math.round(r.history.throughput.seconds)
      } s); delivery p50 / p99 (${r.history.latency.samples} samples)`,
      `${count(r.history.throughput.perSecond)} msg/s (${
        count(r.history.throughput.sent)
      } sent, ${r.history.throughput.lost} lost, ${r.history.throughput.duplicated} duplicated); ${
        ms(r.history.latency.p50)
      } / ${ms(r.history.latency.p99)}`,
    ],
    [
      `${r.contention.processes} processes sending at once: per send p50 / p90 / p99 / max (${r.contention.latency.samples} sends); rate`,
      `${ms(r.contention.latency.p50)} / ${ms(quantile(r.contention.latency.values, 0.9))} / ${
        ms(r.contention.latency.p99)
      } / ${ms(r.contention.latency.max)}; ${count(r.contention.perSecond)} msg/s`,
    ],
    [
      `Idle (${idle.peers} peers, ${Math.round(idle.seconds)} s): commits seen, WAL growth`,
      `${idle.commits}, ${idle.walBytesGrown} bytes`,
    ],
    [
      "Idle: CPU per server, max / mean",
      `${idle.cpuPercentMax.toFixed(2)} % / ${idle.cpuPercentMean.toFixed(2)} %`,
    ],
    ...r.throughput.map((t) => [
      `Throughput, ${t.senders} sender(s), ${t.perCall} per call (${Math.round(t.seconds)} s)`,
      `${count(t.perSecond)} msg/s (${
        count(t.sent)
      } sent, ${t.lost} lost, ${t.duplicated} duplicated)`,
    ]),
    [
      `Fan-out to 16 receivers, all delivered, p50 / p99 (${fanout.samples} rounds)`,
      `${ms(fanout.p50)} / ${ms(fanout.p99)}`,
    ],
    [
      `HTTP mailboxes, ${mailbox.clients} clients (${
        Math.round(mailbox.seconds)
      } s): requests/s, pops/s`,
      `${count(mailbox.requestsPerSecond)} req/s, ${count(mailbox.popsPerSecond)} pops/s`,
    ],
    [
      `HTTP mailbox request latency p50 / p99 (${count(mailbox.latency.samples)} requests)`,
      `${ms(mailbox.latency.p50)} / ${ms(mailbox.latency.p99)}`,
    ],
    [
      "HTTP mailboxes: messages sent, lost, duplicated",
      `${count(mailbox.sent)}, ${mailbox.lost}, ${mailbox.duplicated}`,
    ],
    [
      `Pathological 64 KiB bodies: sync p50 / p99 / max (${r.hostile.sends.samples} sends); ` +
      "slowest input",
      `${ms(r.hostile.sends.p50)} / ${ms(r.hostile.sends.p99)} / ${
        ms(r.hostile.sends.max)
      }; ${r.hostile.slowest.name}`,
    ],
    [
      `Another process's small sends meanwhile, p50 / p99 / max (${r.hostile.other.samples}); ` +
      "failed calls",
      `${ms(r.hostile.other.p50)} / ${ms(r.hostile.other.p99)} / ${
        ms(r.hostile.other.max)
      }; ${r.hostile.errors}`,
    ],
    [
      `agent-bus watch: agent's sync to the printed line, p50 / p99 (${watch.samples} messages)`,
      `${ms(watch.p50)} / ${ms(watch.p99)}`,
    ],
    [
      `Web console /api/events: agent's sync to the SSE event, p50 / p99 (${events.samples} messages)`,
      `${ms(events.p50)} / ${ms(events.p99)}`,
    ],
    [
      `Chatbus msg_post → msg_wait parked in another process, p50 / p99 / max (${r.chat.latency.samples} posts)`,
      `${ms(r.chat.latency.p50)} / ${ms(r.chat.latency.p99)} / ${ms(r.chat.latency.max)}`,
    ],
    ...r.chat.throughput.map((t) => [
      `Chatbus strict-protocol posts, ${t.agents} agent(s) on one thread, ${
        count(t.stored)
      } stored before (${Math.round(t.seconds)} s)`,
      `${count(t.perSecond)} msg/s (${count(t.posted)} posted, ${
        count(t.conflicts)
      } SeqMismatchError retried, ${t.lost} lost, ${t.duplicated} duplicated)`,
    ]),
    [
      `Chatbus strict loop, 4 agents racing on one thread (${
        Math.round(r.chat.fairness.seconds)
      } s): posts per agent; refusals; most refusals in a row`,
      `${r.chat.fairness.posts.join(" / ")}; ${
        r.chat.fairness.refusals.join(" / ")
      }; ${r.chat.fairness.maxRefusalsInARow}`,
    ],
    ...(r.postgres
      ? [
        [
          `PostgreSQL ${r.postgres.version}: delivery p50 / p95 / p99 / max (${r.postgres.latency.samples} samples)`,
          `${ms(r.postgres.latency.p50)} / ${ms(r.postgres.latency.p95)} / ${
            ms(r.postgres.latency.p99)
          } / ${ms(r.postgres.latency.max)}`,
        ],
        ...[r.postgres.throughput, r.postgres.fourTopics].map((t) => [
          `PostgreSQL: throughput, 4 senders, 10 per call, ${t.topics} topic(s) (${
            Math.round(t.seconds)
          } s)`,
          `${count(t.perSecond)} msg/s (${
            count(t.sent)
          } sent, ${t.lost} lost, ${t.duplicated} duplicated)`,
        ]),
        [
          `PostgreSQL: two HTTP nodes, p50 / p99 / max (${r.postgres.nodes.samples} samples)`,
          `${ms(r.postgres.nodes.p50)} / ${ms(r.postgres.nodes.p99)} / ${ms(r.postgres.nodes.max)}`,
        ],
        ...[r.postgres.nodeThroughput.one, r.postgres.nodeThroughput.two].map((t) => [
          `PostgreSQL: ${t.nodes} HTTP node(s), 4 sessions × 10 per call, four topics`,
          `${count(t.perSecond)} msg/s (${count(t.sent)} sent, ${t.lost} lost)`,
        ]),
      ]
      : []),
    [
      `Teacher publish to waiting student ask, p50 / p99 (${answer.samples} questions)`,
      `${ms(answer.p50)} / ${ms(answer.p99)}`,
    ],
    [
      `Full-text search with the write lock held elsewhere, p50 / p99 (free p50 / p99; ${r.lockedSearch.locked.samples} searches)`,
      `${ms(r.lockedSearch.locked.p50)} / ${ms(r.lockedSearch.locked.p99)} (${
        ms(r.lockedSearch.free.p50)
      } / ${ms(r.lockedSearch.free.p99)}); ${r.lockedSearch.errors} errors`,
    ],
    ...search.points.map((p) => [
      `Search fts at ${count(p.messages)} messages, p50 / p99 (${p.latency.samples} queries)`,
      `${ms(p.latency.p50)} / ${ms(p.latency.p99)}`,
    ]),
    [
      "Loading the search corpus through sync (50 per call)",
      `${count(search.points.at(-1)!.messages / search.loadSeconds)} msg/s`,
    ],
    [
      `Vector scan, 100k × 768, p50 / p95 (${scan.samples} queries)`,
      `${ms(scan.p50)} / ${ms(scan.p95)}`,
    ],
    ...quality.modes.map((m) => [
      `Search quality, ${m.mode}: recall@10 / nDCG@10 (${quality.queries} queries, ${
        count(quality.messages)
      } messages${quality.model ? `, ${quality.model}` : ""})`,
      `${m.recallAt10.toFixed(3)} / ${m.ndcgAt10.toFixed(3)}`,
    ]),
    ...(quality.indexSeconds !== undefined
      ? [[
        "Embedding the quality corpus (endpoint time included)",
        `${quality.indexSeconds.toFixed(0)} s`,
      ]]
      : []),
    ["Start to initialize, median", ms(startup.medianMs)],
    [
      `Hook: prompt hook (1 unread, context line) p50 / p95 / p99 (${r.hooks.prompt.samples} runs)`,
      `${ms(r.hooks.prompt.p50)} / ${ms(r.hooks.prompt.p95)} / ${ms(r.hooks.prompt.p99)}`,
    ],
    [
      `Hook: stop hook that blocks (new message each time) p50 / p95 / p99 (${r.hooks.stop.samples} runs)`,
      `${ms(r.hooks.stop.p50)} / ${ms(r.hooks.stop.p95)} / ${ms(r.hooks.stop.p99)}`,
    ],
    [
      `Hook: on call, message commit → stop hook answers, p50 / max (${r.hooks.wake.samples})`,
      `${ms(r.hooks.wake.p50)} / ${ms(r.hooks.wake.max)}`,
    ],
    [
      "RSS idle / after the search corpus",
      `${startup.idleRssMB.toFixed(1)} MB / ${search.rssMB.toFixed(1)} MB`,
    ],
  ];
  return markdownTable(["measurement", "result"], rows);
}

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Append the run to docs/BENCHMARKS.md; a full run also refreshes both summaries. */
export async function record(
  run: {
    heading: string;
    summary: string;
    details: string;
    full: boolean;
    /** The run's picture: a file name under docs/bench/ and its SVG (none for a partial run). */
    chart?: { name: string; svg: string };
  },
): Promise<void> {
  const docPath = `${ROOT}docs/BENCHMARKS.md`;
  await Deno.mkdir(`${ROOT}docs`, { recursive: true });
  let doc: string;
  try {
    doc = await Deno.readTextFile(docPath);
  } catch {
    doc = `# Benchmarks

Measured by \`deno task bench\` (\`--quick\` for a short run): real server processes driven by the
SDK client over MCP stdio (and Streamable HTTP for the mailboxes), on a temporary database. Figures depend on the machine; each run
says which one it ran on. The summary shows the latest full run; every run is kept below.

<!-- bench:summary -->
<!-- /bench:summary -->

## Runs
`;
  }
  const block =
    `<!-- bench:summary -->\nLatest full run: ${run.heading}\n\n${run.summary}\n<!-- /bench:summary -->`;
  if (run.full) doc = replaceSummary(doc, block);
  let picture = "";
  if (run.chart) {
    await Deno.mkdir(`${ROOT}docs/bench`, { recursive: true });
    await Deno.writeTextFile(`${ROOT}docs/bench/${run.chart.name}`, run.chart.svg);
    if (run.full) await Deno.writeTextFile(`${ROOT}docs/bench/latest.svg`, run.chart.svg);
    picture = `![Delivery latency and throughput of this run](bench/${run.chart.name})\n\n`;
  }
  // (A partial run has no details: the file still ends with one newline, as `deno fmt` wants.)
  doc = `${doc.trimEnd()}\n\n### ${run.heading}\n\n${picture}${run.summary}\n\n${run.details}`
    .trimEnd() + "\n";
  await Deno.writeTextFile(docPath, doc);
  if (run.full) {
    const performancePath = `${ROOT}docs/PERFORMANCE.md`;
    await Deno.writeTextFile(
      performancePath,
      replaceSummary(await Deno.readTextFile(performancePath), block),
    );
  }
}

function replaceSummary(text: string, block: string): string {
  return text.replace(/<!-- bench:summary -->[\s\S]*?<!-- \/bench:summary -->/, block);
}

/**
 * Each client's hook as installed, the resumed Gemini turn, and the on-call
 * answer; answered by the hook's own process or by the resident bus.
 */
function hookRows(hooks: HooksResult): string[][] {
  const resident = hooks.mode === "resident";
  const by = resident ? ", resident bus running" : "";
  return [
    ...hooks.stops.map((s) => [
      `Hook run: ${s.client} ${s.event} that blocks${by}, p50 / p99 (${s.times.samples} runs)`,
      resident ? "≤ 30 ms p99 (quiet machine)" : "≤ 50 ms p99 (quiet machine)",
      `${ms(s.times.p50)} / ${ms(s.times.p99)}`,
    ]),
    [
      `Hook run: gemini BeforeAgent on the resumed turn (answered unopened)${by}, p50 / p99 (${hooks.resumed.samples})`,
      "",
      `${ms(hooks.resumed.p50)} / ${ms(hooks.resumed.p99)}`,
    ],
    [
      `Hook run: prompt hook (1 unread, context line)${by}, p50 / p99 (${hooks.prompt.samples})`,
      "",
      `${ms(hooks.prompt.p50)} / ${ms(hooks.prompt.p99)}`,
    ],
    [
      `On call: message commit → stop hook answers${by}, p50 / max (${hooks.wake.samples})`,
      "",
      `${ms(hooks.wake.p50)} / ${ms(hooks.wake.max)}`,
    ],
  ];
}

/** The resident bus against a process per agent (`resident.ts`), measured in the same run. */
function residentRows(
  { standalone: s, resident: r, connections, kills: k, byUrl: u }: ResidentResult,
): string[][] {
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const counts = (byAgents: Record<number, number>) =>
    Object.entries(byAgents).map(([agents, n]) => `${agents} → ${n}`).join(", ");
  const pg = connections
    ? [[
      "Resident bus on PostgreSQL: connections of one host (agents → connections)",
      "constant from 1 to 50 agents",
      `${counts(connections.resident)}; standalone ${counts(connections.standalone)}`,
    ]]
    : [];
  return [
    ...pg,
    [
      "Resident bus: spawn → `initialize` answered, bus running (p50)",
      "≤ 0.5 × standalone, ≤ 25 ms",
      `${r.startup.p50.toFixed(0)} ms vs ${s.startup.p50.toFixed(0)} ms standalone (${
        ratio(r.startup.p50, s.startup.p50)
      }); p95 ${r.startup.p95.toFixed(0)} vs ${s.startup.p95.toFixed(0)} ms`,
    ],
    [
      "Resident bus: memory of 8 agents, sum of PSS of every process",
      "≤ 0.55 × standalone",
      `${r.memoryMB.toFixed(0)} MB (8 entries + the bus) vs ${s.memoryMB.toFixed(0)} MB (${
        ratio(r.memoryMB, s.memoryMB)
      })`,
    ],
    [
      "Resident bus: delivery between two agents (half a ping-pong)",
      "p50 ≤ 0.5 × standalone, p99 ≤ 5 ms",
      `p50 ${r.delivery.p50.toFixed(2)} ms vs ${s.delivery.p50.toFixed(2)} ms (${
        ratio(r.delivery.p50, s.delivery.p50)
      }); p99 ${r.delivery.p99.toFixed(2)} vs ${s.delivery.p99.toFixed(2)} ms`,
    ],
    [
      "Resident bus: 4 agents × 1 message per call",
      "≥ 2 × standalone",
      `${r.fourByOne.toFixed(0)} msg/s vs ${s.fourByOne.toFixed(0)} msg/s (${
        ratio(r.fourByOne, s.fourByOne)
      })`,
    ],
    [
      `Resident bus: ${k.kills} SIGKILLs under ${k.agents} agents' traffic`,
      "0 acknowledged lost, 0 duplicated, 0 `AGENT_NOT_JOINED`",
      `${k.acknowledged} acknowledged: ${k.lost} lost, ${k.duplicated} duplicated, ${k.notJoined} ` +
      `\`AGENT_NOT_JOINED\`, ${k.otherErrors} other errors; a call p50 ${ms(k.calls.p50)}, p99 ` +
      `${ms(k.calls.p99)}, slowest ${ms(k.calls.max)}; a new bus ${
        ms(k.restart.p50)
      } after a kill (p50)`,
    ],
    [
      "By URL (`bus start`): the client's `initialize` answered, p50; memory of 8 agents",
      "no process per agent",
      `${ms(u.startup.p50)} (p95 ${ms(u.startup.p95)}); ${
        u.memoryMB.toFixed(0)
      } MB (the bus alone: the clients are the user's own)`,
    ],
    [
      "By URL: delivery between two agents; 4 agents × 1 message per call",
      "",
      `p50 ${u.delivery.p50.toFixed(2)} ms, p99 ${u.delivery.p99.toFixed(2)} ms; ${
        u.fourByOne.toFixed(0)
      } msg/s (${ratio(u.fourByOne, s.fourByOne)} standalone)`,
    ],
  ];
}

/** The rows of a run of `--only` (some benchmarks, not the summary's). */
export function partialTable(r: {
  secrets?: SecretsCost[];
  streams?: StreamsResult;
  fairness?: LoopTally;
  hooks?: HooksResult[];
  resident?: ResidentResult;
  commit?: CommitHold[] | undefined;
}): string {
  const rows: string[][] = [];
  for (const hooks of r.hooks ?? []) rows.push(...hookRows(hooks));
  if (r.resident) rows.push(...residentRows(r.resident));
  for (const hold of r.commit ?? []) {
    rows.push([
      `PostgreSQL: the commit lock held by a send of ${hold.perSend} message(s), p50 / p99 (${hold.hold.samples}); the ceiling it sets`,
      "raised (state it and what sets it)",
      `${ms(hold.hold.p50)} / ${ms(hold.hold.p99)}; ${
        Math.round(hold.ceiling).toLocaleString("en-US")
      } msg/s whatever the cores`,
    ]);
  }
  for (const cost of r.secrets ?? []) {
    rows.push([
      `Secret screen per message: ${cost.name}`,
      "linear",
      `${cost.micros.p50.toFixed(1)} µs p50 / ${cost.micros.p99.toFixed(1)} µs p99 (${
        count(cost.chars)
      } chars)`,
    ]);
  }
  if (r.streams) {
    const [none, some] = r.streams.runs;
    rows.push([
      `Memory per event stream that never reads (${
        some!.stuck
      } of them, ${r.streams.postedMB} MB posted)`,
      "≤ 4 MiB + kernel buffers",
      `${r.streams.perStreamMB.toFixed(1)} MB (server grew ${some!.grownMB.toFixed(0)} MB, ` +
      `${none!.grownMB.toFixed(0)} MB without them)`,
    ]);
  }
  if (r.fairness) {
    const total = r.fairness.posts.reduce((a, b) => a + b, 0);
    rows.push([
      `Chatbus: ${r.fairness.posts.length} agents racing in the strict loop`,
      "every share ≥ 15 %",
      `${(total / r.fairness.seconds).toFixed(0)} posts/s; shares ${
        r.fairness.posts.map((p) => `${Math.round((100 * p) / total)} %`).join(" / ")
      }; refusals ${r.fairness.refusals.reduce((a, b) => a + b, 0)}`,
    ]);
  }
  return markdownTable(["metric", "target", "measured"], rows);
}
