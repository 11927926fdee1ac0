/**
 * The resident bus against a process per agent, in one run: the time from
 * spawning an entry to the answer of `initialize` (with the bus running),
 * the memory of 8 agents (every process counted: the sum of their PSS, the
 * bus's included), one-way delivery between two agents (half a ping-pong
 * of `sync` calls that send and wait), and 4 agents sending one message per
 * call.
 *
 * @module
 */

import { type Peer, startPeer } from "../tests/_helpers/peer.ts";
import { cli } from "../tests/_helpers/cli.ts";
import { type Distribution, distribution } from "./_stats.ts";
import { pssMB } from "./_system.ts";
import { benchThroughput } from "./throughput.ts";

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
}

/** Run every figure for both modes, alternating where it can. */
export async function benchResident(
  dir: string,
  options: { starts: number; pings: number; seconds: number },
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
    standalone: await pingPong(dbPath, false, options.pings),
    resident: await pingPong(dbPath, true, options.pings),
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
  return { standalone: mode("standalone"), resident: mode("resident") };
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

/** One-way delivery: half of each round trip of a ping answered by a pong, both `sync` with a wait. */
async function pingPong(dbPath: string, resident: boolean, rounds: number): Promise<Distribution> {
  await using a = await startPeer({ dbPath, resident });
  await using b = await startPeer({ dbPath, resident });
  const { topic_id } = await a.ok("topic_create", { name: `ping-pong-${resident}` });
  await a.ok("topic_join", { agent_name: "ping", topic_id });
  await b.ok("topic_join", { agent_name: "pong", topic_id });
  const say = (peer: Peer, text: string) =>
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
