/**
 * `deno task bench [--quick]`: run the benchmarks, print one table, and
 * record it in docs/BENCHMARKS.md.
 *
 * Every benchmark but the vector scan starts real server processes and
 * drives them with the SDK client, as agents do (over stdio, and over
 * Streamable HTTP for the mailboxes), on a temporary database. Each run is appended to docs/BENCHMARKS.md with its
 * date, machine and commit; a full run also replaces the summary at the top
 * of that file and in docs/PERFORMANCE.md. Semantic search quality is measured when
 * AGENT_BUS_EMBEDDINGS_URL names an embedding endpoint (full runs only).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { runChart } from "./chart.ts";
import {
  benchChatFairness,
  benchChatLatency,
  benchChatThroughput,
  type ChatThroughput,
} from "./chatbus.ts";
import { benchConsoleEvents } from "./console.ts";
import { benchContention } from "./contention.ts";
import { benchFanout } from "./fanout.ts";
import { benchWithHistory } from "./history.ts";
import { benchHooks } from "./hooks.ts";
import { benchResident } from "./resident.ts";
import { benchCommitHold } from "./commit_hold.ts";
import { benchHostile } from "./hostile.ts";
import { benchIdle } from "./idle.ts";
import { benchLatency } from "./latency.ts";
import { benchMailbox } from "./mailbox.ts";
import { benchPostgres } from "./postgres.ts";
import { benchAnswerLatency } from "./qa.ts";
import { benchQuality } from "./quality.ts";
import { type BenchResults, detailTable, partialTable, record, summaryTable } from "./report.ts";
import { benchSearch, benchSearchUnderLock } from "./search.ts";
import { benchStall, stallUnavailable } from "./stall.ts";
import { benchStartup } from "./startup.ts";
import { commit, machine } from "./_system.ts";
import { benchThroughput, type ThroughputResult } from "./throughput.ts";
import { benchVectorScan } from "./vectors.ts";
import { benchSecrets } from "./secrets.ts";
import { benchStreams } from "./streams.ts";
import { benchWatch } from "./watch.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { quick: { type: "boolean" }, only: { type: "string" } },
});
const quick = values.quick ?? false;
const size = (full: number, short: number) => quick ? short : full;
const progress = (text: string) => Deno.stderr.writeSync(new TextEncoder().encode(`… ${text}\n`));

const dir = await Deno.makeTempDir({ prefix: "agent-bus-bench-" });
const startedAt = new Date();
try {
  if (values.only !== undefined) await runSome(values.only.split(","));
  else await runAll();
} finally {
  await Deno.remove(dir, { recursive: true });
}

/**
 * `--only secrets,streams,fairness,hooks,resident,commit`: those benchmarks alone, printed and
 * appended to docs/BENCHMARKS.md as a partial run (the summary stays).
 */
async function runSome(names: string[]): Promise<void> {
  const known = ["secrets", "streams", "fairness", "hooks", "resident", "commit"];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new Error(`--only takes ${known.join(", ")}; not ${unknown}`);
  const results: Parameters<typeof partialTable>[0] = {};
  if (names.includes("secrets")) {
    progress("secret screen: cost per message");
    results.secrets = benchSecrets(size(2000, 200));
  }
  if (names.includes("streams")) {
    progress("event streams that never read: memory per stream");
    results.streams = await benchStreams(dir, 8);
  }
  if (names.includes("fairness")) {
    progress("chatbus: four agents racing in the strict loop");
    results.fairness = await benchChatFairness(dir, { agents: 4, posts: size(1000, 200) });
  }
  if (names.includes("hooks")) {
    progress(
      "hooks: each client's stop hook, the resumed turn, on-call wake-up; then answered by the resident bus",
    );
    results.hooks = [
      await benchHooks(dir, size(200, 50), size(20, 5)),
      await benchHooks(dir, size(200, 50), size(20, 5), true),
    ];
  }
  if (names.includes("resident")) {
    progress(
      "resident bus against a process per agent: start-up, memory, delivery, 4 × 1; SIGKILLs under traffic",
    );
    results.resident = await benchResident(dir, {
      starts: size(20, 5),
      pings: size(300, 50),
      seconds: size(10, 3),
      kills: size(20, 5),
    });
  }
  if (names.includes("commit")) {
    progress("PostgreSQL: how long a send holds the commit lock, and the ceiling that sets");
    results.commit = await benchCommitHold(size(500, 100));
  }
  const table = partialTable(results);
  await Deno.stdout.write(new TextEncoder().encode(`${table}\n`));
  const m = machine();
  const when = startedAt.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  const heading = `${when} · partial run (${names.join(", ")}) · commit ${await commit()} · ` +
    `${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.cpu}, ${m.os}, Deno ${m.deno}`;
  await record({ heading, summary: table, details: "", full: false });
  progress("recorded in docs/BENCHMARKS.md");
}

/** The full run (or `--quick`): every benchmark, and the summary replaced. */
async function runAll(): Promise<void> {
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
  const stored = size(100_000, 10_000);
  progress(`history: ${stored} messages stored, then throughput and delivery in that topic`);
  const history = await benchWithHistory(dir, {
    stored,
    samples: size(500, 100),
    seconds: size(10, 3),
  });
  progress("contention: 16 processes sending at once");
  const contention = await benchContention(dir, { processes: 16, sends: size(100, 30) });
  progress("fan-out to 16 receivers");
  const fanout = await benchFanout(dir, 16, size(100, 20));
  progress("HTTP mailboxes: 8 clients, send + check_mail");
  const mailbox = await benchMailbox(dir, { clients: 8, seconds: size(10, 3) });
  progress("hostile input: pathological 64 KiB bodies beside another sender");
  const hostile = await benchHostile(dir, size(5, 2));
  progress("teacher/student answer latency");
  const answer = await benchAnswerLatency(dir, size(200, 50));
  progress("chatbus: msg_post to a parked msg_wait");
  const chatLatency = await benchChatLatency(dir, size(200, 50));
  const chatThroughput: ChatThroughput[] = [];
  for (const [agents, stored] of [[1, 0], [4, 0], [1, size(100_000, 10_000)]] as const) {
    progress(`chatbus: strict posts, ${agents} agent(s), ${stored} stored`);
    chatThroughput.push(await benchChatThroughput(dir, { agents, stored, seconds: size(10, 3) }));
  }
  progress("chatbus: four agents racing in the strict loop");
  const chatFairness = await benchChatFairness(dir, { agents: 4, posts: size(1000, 200) });
  progress("agent-bus watch latency");
  const watch = await benchWatch(dir, size(200, 50));
  progress("web console live events");
  const events = await benchConsoleEvents(dir, size(200, 50));
  progress("search");
  const search = await benchSearch(dir, quick ? [10_000] : [10_000, 100_000]);
  progress("search while another program holds the write lock");
  const lockedSearch = await benchSearchUnderLock(dir, size(20_000, 5_000));
  progress("hooks: prompt and stop hook run times, on-call wake-up");
  const hooks = await benchHooks(dir, size(200, 50), size(20, 5));
  progress("start-up");
  const startup = await benchStartup(dir, size(20, 10));
  progress("vector scan");
  const scan = await benchVectorScan(dir, { count: 100_000, dims: 768, queries: size(30, 10) });
  const semantic = !quick && Deno.env.get("AGENT_BUS_EMBEDDINGS_URL") !== undefined;
  progress(`search quality (${semantic ? "fts, semantic, hybrid" : "fts only"})`);
  const quality = await benchQuality(dir, { filler: 2000, semantic });
  progress("PostgreSQL store: delivery, throughput, two HTTP nodes, idle queries");
  const pg = await benchPostgres(dir, {
    samples: size(200, 50),
    seconds: size(10, 3),
    idleSeconds: size(30, 5),
  });
  const stallSkip = await stallUnavailable();
  progress(
    `a 60 s stall of one host's path to PostgreSQL${stallSkip ? ` (skipped: ${stallSkip})` : ""}`,
  );
  const stall = stallSkip ? stallSkip : await benchStall(size(60, 10));

  const results: BenchResults = {
    latency,
    idle,
    throughput,
    history,
    contention,
    fanout,
    mailbox,
    answer,
    watch,
    events,
    search,
    lockedSearch,
    startup,
    hooks,
    scan,
    quality,
    hostile,
    chat: { latency: chatLatency, throughput: chatThroughput, fairness: chatFairness },
    postgres: pg,
    stall,
  };
  const summary = summaryTable(results);
  const details = detailTable(results);
  await Deno.stdout.write(new TextEncoder().encode(`${summary}\n\n${details}\n`));

  const m = machine();
  const when = startedAt.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  const heading = `${when} · ${quick ? "quick" : "full"} run · commit ${await commit()} · ` +
    `${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.cpu}, ${m.os}, Deno ${m.deno}`;
  const stamp = startedAt.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 13);
  const chart = {
    name: `${stamp}-${await commit()}.svg`,
    svg: runChart(heading, latency, throughput),
  };
  await record({ heading, summary, details, full: !quick, chart });
  progress(`recorded in docs/BENCHMARKS.md${quick ? "" : " and docs/PERFORMANCE.md"}`);
}
