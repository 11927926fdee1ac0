/**
 * The resident bus against a process per agent, in one run: the time from
 * spawning an entry to the answer of `initialize` (with the bus running),
 * the memory of 8 agents (every process counted: the sum of their PSS, the
 * bus's included), one-way delivery between two agents (half a ping-pong
 * of `sync` calls that send and wait), 4 agents sending one message per
 * call, and on PostgreSQL the connections a host holds for 1, 10 and 50
 * agents (standalone stops at 10: 50 would need more than a default
 * cluster's 100). Then the resident bus alone: SIGKILLed again and again
 * under 8 agents' traffic, what their calls got and what was kept; and
 * agents attached by URL (`bus start`), with no process of their own: the
 * same figures, their `initialize` timed from the client's first request.
 *
 * @module
 */

import { type Peer, startPeer } from "../tests/_helpers/peer.ts";
import { cli } from "../tests/_helpers/cli.ts";
import { connectHttp } from "../tests/_helpers/http.ts";
import { killsUnderTraffic } from "../tests/_helpers/resident.ts";
import { type Distribution, distribution } from "./_stats.ts";
import { pssMB } from "./_system.ts";
import { type Agent, benchThroughput } from "./throughput.ts";
import postgres from "postgres";
import { postgresBin, startPostgres } from "../tests/_helpers/postgres.ts";

/** One mode's figures. */
export interface ModeResult {
  startup: Distribution;
  memoryMB: number;
  delivery: Distribution;
  fourByOne: number;
}

/** Both modes, measured in the same run. */
export interface ResidentResult {
  standalone: ModeResult;
  resident: ModeResult;
  /** PostgreSQL connections of one host by number of agents; undefined without PostgreSQL. */
  connections?: { resident: Record<number, number>; standalone: Record<number, number> };
  kills: KillsResult;
  /** Agents attached by URL; their memory is the bus's alone. */
  byUrl: ModeResult;
}

/** The bus SIGKILLed under agents' traffic: what their calls got, and what was kept. */
export interface KillsResult {
  agents: number;
  kills: number;
  acknowledged: number;
  /** Acknowledged, and not in the topic afterwards. */
  lost: number;
  /** Stored more than once. */
  duplicated: number;
  /** Calls answered `AGENT_NOT_JOINED` (the session not carried on as the same agent). */
  notJoined: number;
  /** Calls that failed otherwise. */
  otherErrors: number;
  /** Every call's time (one send each). */
  calls: Distribution;
  /** From a kill until a new bus runs. */
  restart: Distribution;
}

/** Run every figure for both modes, alternating where it can. */
export async function benchResident(
  dir: string,
  options: { starts: number; pings: number; seconds: number; kills: number },
): Promise<ResidentResult> {
  const dbPath = `${dir}/resident.sqlite`;
  // The bus runs before the resident starts are timed (the first entry starts it).
  await using keeper = await startPeer({ dbPath, resident: true });
  const starts = { standalone: [] as number[], resident: [] as number[] };
  for (let i = 0; i < options.starts + 1; i++) {
    for (const resident of [false, true]) {
      const started = performance.now();
      const peer = await startPeer({ dbPath, resident });
      const elapsed = performance.now() - started;
      if (i > 0) starts[resident ? "resident" : "standalone"].push(elapsed);
      await peer.close();
    }
  }
  const memory = {
    standalone: await memoryOf(dbPath, false),
    resident: await memoryOf(dbPath, true),
  };
  const delivery = {
    standalone: await pingPong(
      () => startPeer({ dbPath, resident: false }),
      "standalone",
      options.pings,
    ),
    resident: await pingPong(
      () => startPeer({ dbPath, resident: true }),
      "resident",
      options.pings,
    ),
  };
  const fourByOne = async (resident: boolean) =>
    (await benchThroughput(dir, {
      senders: 4,
      perCall: 1,
      seconds: options.seconds,
      dbPath: `${dir}/four-${resident}.sqlite`,
      resident,
    })).perSecond;
  const throughput = { standalone: await fourByOne(false), resident: await fourByOne(true) };
  await keeper.close();
  for (const path of [dbPath, `${dir}/four-true.sqlite`]) {
    await cli(["bus", "stop"], { AGENT_BUS_DB: path });
  }
  const mode = (m: "standalone" | "resident"): ModeResult => ({
    startup: distribution(starts[m]),
    memoryMB: memory[m],
    delivery: delivery[m],
    fourByOne: throughput[m],
  });
  return {
    standalone: mode("standalone"),
    resident: mode("resident"),
    connections: await connectionsByAgents(),
    kills: await killsOf(`${dir}/kills.sqlite`, 8, options.kills),
    byUrl: await byUrl(`${dir}/url.sqlite`, options),
  };
}

/** The same figures for agents attached by URL to a bus that `bus start` started. */
async function byUrl(
  dbPath: string,
  options: { starts: number; pings: number; seconds: number },
): Promise<ModeResult> {
  // (The readers of the 4 × 1 row read up to 1,000 messages a call, as the other modes' do.)
  const env = { AGENT_BUS_DB: dbPath, AGENT_BUS_MAX_SYNC_ITEMS: "1000" };
  const started = await cli(["bus", "start", "--port", "0", "--json"], env);
  if (started.code !== 0) throw new Error(`bus start: ${started.stderr}`);
  const bus = JSON.parse(started.stdout) as { pid: number; url: string; token_file: string };
  const token = (await Deno.readTextFile(bus.token_file)).trim();
  const open = () => connectHttp(bus.url, { headers: { Authorization: `Bearer ${token}` } });
  try {
    const starts: number[] = [];
    for (let i = 0; i < options.starts + 1; i++) {
      const begun = performance.now();
      const client = await open();
      if (i > 0) starts.push(performance.now() - begun);
      await client.close();
    }
    const clients: Agent[] = [];
    let memoryMB;
    try {
      for (let i = 0; i < 8; i++) clients.push(await open());
      for (const client of clients) await client.ok("topic_list", {});
      memoryMB = pssMB(bus.pid);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    return {
      startup: distribution(starts),
      memoryMB,
      delivery: await pingPong(open, "url", options.pings),
      fourByOne: (await benchThroughput("", {
        senders: 4,
        perCall: 1,
        seconds: options.seconds,
        dbPath,
        open,
      })).perSecond,
    };
  } finally {
    await cli(["bus", "stop"], env);
  }
}

/** `agents` agents send one message per call while their bus is SIGKILLed `kills` times. */
async function killsOf(dbPath: string, agents: number, kills: number): Promise<KillsResult> {
  const peers = await Promise.all(
    Array.from({ length: agents }, () => startPeer({ dbPath, resident: true })),
  );
  try {
    const outcome = await killsUnderTraffic(dbPath, {}, peers, { kills, between: 2 * agents });
    const kept = new Set(outcome.stored);
    const notJoined = outcome.errors.filter((e) => e.startsWith("AGENT_NOT_JOINED")).length;
    return {
      agents,
      kills,
      acknowledged: outcome.acknowledged.length,
      lost: outcome.acknowledged.filter((content) => !kept.has(content)).length,
      duplicated: outcome.stored.length - kept.size,
      notJoined,
      otherErrors: outcome.errors.length - notJoined,
      calls: distribution(outcome.callMs),
      restart: distribution(outcome.restartMs),
    };
  } finally {
    await Promise.all(peers.map((peer) => peer.close()));
    await cli(["bus", "stop"], { AGENT_BUS_DB: dbPath });
  }
}

/**
 * The connections one host's agents hold on a default cluster, each agent
 * having joined a topic, sent and read once: for 1, 10 and 50 agents on the
 * resident bus, and for 1 and 10 with a process each.
 */
async function connectionsByAgents(): Promise<ResidentResult["connections"]> {
  if ("unavailable" in await postgresBin()) return undefined;
  await using pg = await startPostgres();
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  const counts = {
    resident: {} as Record<number, number>,
    standalone: {} as Record<number, number>,
  };
  try {
    for (const resident of [true, false]) {
      const peers: Peer[] = [];
      const database = `connections_${resident}`;
      await sql.unsafe(`CREATE DATABASE ${database}`);
      const dbPath = pg.url.replace(/\/bus$/, `/${database}`);
      try {
        for (const agents of resident ? [1, 10, 50] : [1, 10]) {
          while (peers.length < agents) peers.push(await startPeer({ dbPath, resident }));
          const { topic_id } = await peers[0]!.ok("topic_create", { name: "connections" });
          await Promise.all(peers.map(async (peer, i) => {
            await peer.ok("topic_join", { agent_name: `agent-${i}`, topic_id });
            await peer.ok("sync", {
              topic_id,
              outbox: [{ content_markdown: "hi" }],
              wait_seconds: 0,
            });
          }));
          // (Each LISTEN connection's prober connects at its first probe, 2 s in.)
          await new Promise((resolve) => setTimeout(resolve, 3000));
          const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = ${database}`;
          counts[resident ? "resident" : "standalone"][agents] = row!.n as number;
        }
      } finally {
        await Promise.all(peers.map((peer) => peer.close()));
        if (resident) await cli(["bus", "stop"], { AGENT_BUS_DB: dbPath });
      }
    }
  } finally {
    await sql.end();
  }
  return counts;
}

/** The sum of PSS of 8 idle agents that have each listed topics once, and of the bus they share. */
async function memoryOf(dbPath: string, resident: boolean): Promise<number> {
  const peers: Peer[] = [];
  try {
    for (let i = 0; i < 8; i++) peers.push(await startPeer({ dbPath, resident }));
    for (const peer of peers) await peer.ok("topic_list", {});
    let total = peers.reduce((sum, peer) => sum + pssMB(peer.pid), 0);
    if (resident) {
      const status = await cli(["bus", "status", "--json"], { AGENT_BUS_DB: dbPath });
      total += pssMB((JSON.parse(status.stdout) as { pid: number }).pid);
    }
    return total;
  } finally {
    await Promise.all(peers.map((peer) => peer.close()));
  }
}

/**
 * One-way delivery between two agents `open` attaches: half of each round
 * trip of a ping answered by a pong, both `sync` with a wait.
 */
async function pingPong(
  open: () => Promise<Agent>,
  name: string,
  rounds: number,
): Promise<Distribution> {
  const a = await open();
  const b = await open();
  try {
    return await pingPongOf(a, b, name, rounds);
  } finally {
    await a.close();
    await b.close();
  }
}

async function pingPongOf(a: Agent, b: Agent, name: string, rounds: number) {
  const { topic_id } = await a.ok("topic_create", { name: `ping-pong-${name}` });
  await a.ok("topic_join", { agent_name: "ping", topic_id });
  await b.ok("topic_join", { agent_name: "pong", topic_id });
  const say = (peer: Agent, text: string) =>
    peer.ok("sync", {
      topic_id,
      outbox: [{ content_markdown: text }],
      wait_seconds: 30,
      max_items: 1,
    });
  const warmup = 20;
  const times: number[] = [];
  let answering = b.ok("sync", { topic_id, wait_seconds: 30, max_items: 1 });
  for (let i = 0; i < rounds + warmup; i++) {
    const started = performance.now();
    const pinged = say(a, `ping ${i}`);
    await answering; // b got the ping; it answers, and waits for the next one
    answering = say(b, `pong ${i}`);
    await pinged; // a got the pong
    if (i >= warmup) times.push((performance.now() - started) / 2);
  }
  await a.ok("sync", { topic_id, outbox: [{ content_markdown: "done" }], wait_seconds: 0 });
  await answering;
  return distribution(times);
}
