/**
 * The resident bus as tests and the bench drive it: its status through
 * the CLI, and agents' traffic while the bus is SIGKILLed again and again
 * (what each call got, and what the database kept).
 *
 * @module
 */

import { cli } from "./cli.ts";
import { run } from "./run.ts";
import { type Peer, readTopic, startPeer, until } from "./peer.ts";

/** What `agent-bus bus status --json` says of a database's bus. */
export interface BusStatus {
  running: boolean;
  pid?: number;
  version?: string;
  /** Entries of other settings it turned away. */
  turned_away?: { count: number; last_at: string | null };
  sessions?: number;
  socket: string;
  /** The bus's own log file (there or not). */
  log: string;
}

/** `agent-bus bus status --json` for the database at `db`. */
export async function busStatus(db: string, env: Record<string, string> = {}): Promise<BusStatus> {
  const result = await cli(["bus", "status", "--json"], { AGENT_BUS_DB: db, ...env });
  if (result.code !== 0) throw new Error(`bus status: exit ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as BusStatus;
}

/** What the agents' calls got while their bus was killed, and what was stored. */
export interface KillsOutcome {
  /** Contents of every message a call acknowledged. */
  acknowledged: string[];
  /** `code: message` of every call that failed. */
  errors: string[];
  /** Contents of the topic's messages, as a fresh agent reads them afterwards. */
  stored: string[];
  /** Every call's time, ms (the slow ones are those a kill interrupted). */
  callMs: number[];
  /** From each SIGKILL until a new bus answered `bus status`, ms. */
  restartMs: number[];
}

/**
 * Every agent of `peers` (attached to the resident bus of `db`) sends one
 * message per `sync` on one topic, while the bus is SIGKILLed `kills`
 * times, each once at least `between` more messages were acknowledged since
 * the last; then each sends 5 more, and a new agent reads the topic.
 */
export async function killsUnderTraffic(
  db: string,
  env: Record<string, string>,
  peers: Peer[],
  options: { kills: number; between: number },
): Promise<KillsOutcome> {
  const outcome: KillsOutcome = {
    acknowledged: [],
    errors: [],
    stored: [],
    callMs: [],
    restartMs: [],
  };
  const { topic_id } = await peers[0]!.ok("topic_create", { name: "kills" });
  for (const [i, peer] of peers.entries()) {
    await peer.ok("topic_join", { agent_name: `agent-${i}`, topic_id });
  }
  let killing = true;
  let stopped = false;
  const traffic = peers.map(async (peer, i) => {
    for (let n = 0; !stopped && (killing || n < 5); n++) {
      const started = performance.now();
      const result = await peer.call("sync", {
        topic_id,
        outbox: [{ content_markdown: `agent ${i} message ${n}` }],
        wait_seconds: 0,
      }).catch((error) => {
        throw new Error(`agent ${i}'s entry: ${error}\n${peer.stderr()}`);
      });
      outcome.callMs.push(performance.now() - started);
      const content = result.structuredContent as {
        sent?: { message: { content_markdown: string } }[];
        error?: { code: string; message: string };
      };
      if (result.isError) outcome.errors.push(`${content.error?.code}: ${content.error?.message}`);
      else outcome.acknowledged.push(...content.sent!.map((s) => s.message.content_markdown));
    }
  });
  try {
    for (let kill = 0; kill < options.kills; kill++) {
      const before = outcome.acknowledged.length;
      // (A bus starting from source after a kill takes seconds on a busy machine.)
      await until(() => outcome.acknowledged.length >= before + options.between, {
        timeoutMs: 60_000,
        what: "traffic on the bus",
      });
      const { pid } = await busStatus(db, env);
      const killed = performance.now();
      Deno.kill(pid!, "SIGKILL");
      await until(async () => {
        const now = await busStatus(db, env);
        return now.running && now.pid !== pid;
      }, { timeoutMs: 60_000, what: "a new bus" });
      outcome.restartMs.push(performance.now() - killed);
    }
    killing = false;
    await Promise.all(traffic);
  } finally {
    // The traffic ends before its entries do, so a failure above is the one reported.
    stopped = true;
    await Promise.allSettled(traffic);
  }
  await using auditor = await startPeer({ dbPath: db });
  await auditor.ok("topic_join", { agent_name: "auditor", topic_id });
  outcome.stored = (await readTopic(auditor, topic_id)).map((m) => m.content_markdown);
  return outcome;
}

/**
 * A copy of this checkout in `dir` that calls itself `version`: what an
 * upgrade from source looks like to the bus that runs (the program, its
 * `deno.json` and lock, and the bundles, whose `deno.json` is inlined).
 *
 * @returns the copy's entry bundle, as `install` would start it
 */
export async function checkoutOfVersion(dir: string, version: string): Promise<string> {
  const root = new URL("../../", import.meta.url).pathname;
  await Deno.mkdir(dir, { recursive: true });
  const names = ["main.ts", "entry.ts", "hook.ts", "deno.json", "deno.lock", "lib"];
  const copied = await run("cp", ["-r", ...names.map((name) => `${root}${name}`), dir]);
  if (copied.code !== 0) throw new Error(`cp: ${copied.stderr}`);
  const current = JSON.parse(await Deno.readTextFile(`${root}deno.json`)).version as string;
  for (const file of ["deno.json", "lib/entry.bundle.js", "lib/cli/hook/hook.bundle.js"]) {
    const text = await Deno.readTextFile(`${dir}/${file}`);
    const [from, to] = file === "deno.json"
      ? [`"version": "${current}"`, `"version": "${version}"`]
      : [`version: "${current}",`, `version: "${version}",`];
    if (text.split(from).length !== 2) throw new Error(`${file}: not one ${from}`);
    await Deno.writeTextFile(`${dir}/${file}`, text.replace(from, to));
  }
  return `${dir}/lib/entry.bundle.js`;
}
