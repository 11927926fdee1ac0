/**
 * Idle cost: peers blocked in `sync` with no traffic should cost nothing.
 * Counts the commits an observer connection sees (`PRAGMA data_version`
 * moves on every commit by another connection) and the WAL's growth, and
 * reads each server's CPU time from /proc.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { type Peer, startPeer } from "../tests/_helpers/peer.ts";
import { cpuSeconds } from "./_system.ts";
import { waitForLog } from "./_stats.ts";

/** What the idle window cost. */
export interface IdleResult {
  peers: number;
  seconds: number;
  commits: number;
  walBytesGrown: number;
  cpuPercentMax: number;
  cpuPercentMean: number;
}

/** Block `peers` servers in `sync` for `seconds` and measure what they do meanwhile. */
export function benchIdle(dir: string, peers: number, seconds: number): Promise<IdleResult> {
  const dbPath = `${dir}/idle.sqlite`;
  return withWaitingPeers(dbPath, { peers, seconds }, async (servers) => {
    const observer = new DatabaseSync(dbPath, { readOnly: true });
    const version = () =>
      (observer.prepare("PRAGMA data_version").get() as { data_version: number }).data_version;
    const walSize = () => {
      try {
        return Deno.statSync(`${dbPath}-wal`).size;
      } catch {
        return 0;
      }
    };
    const cpuBefore = servers.map((s) => cpuSeconds(s.pid));
    const walBefore = walSize();
    let last = version();
    let commits = 0;
    const started = performance.now();
    while (performance.now() - started < seconds * 1000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const now = version();
      if (now !== last) {
        commits++;
        last = now;
      }
    }
    const elapsed = (performance.now() - started) / 1000;
    const cpu = servers.map((s, i) => (cpuSeconds(s.pid) - cpuBefore[i]!) / elapsed * 100);
    const walBytesGrown = walSize() - walBefore;
    observer.close();
    return {
      peers,
      seconds: elapsed,
      commits,
      walBytesGrown,
      cpuPercentMax: Math.max(...cpu),
      cpuPercentMean: cpu.reduce((a, b) => a + b, 0) / cpu.length,
    };
  });
}

/**
 * Start `peers` servers on `dbPath`, park each in a `sync` that waits
 * longer than `seconds`, run `measure`, then wake them all with one message
 * (every one must get it) and stop them.
 */
export async function withWaitingPeers<T>(
  dbPath: string,
  { peers, seconds }: { peers: number; seconds: number },
  measure: (servers: Peer[]) => Promise<T>,
): Promise<T> {
  const servers: Peer[] = await Promise.all(
    Array.from(
      { length: peers },
      () => startPeer({ dbPath, env: { AGENT_BUS_LOG_LEVEL: "debug" } }),
    ),
  );
  try {
    const topic = await servers[0]!.ok("topic_create", { name: "idle" });
    await Promise.all(
      servers.map((s, i) =>
        s.ok("topic_join", { agent_name: `idle-${i}`, topic_id: topic.topic_id })
      ),
    );
    const waits = servers.map((s) =>
      s.call("sync", { topic_id: topic.topic_id, wait_seconds: seconds + 30 }, {
        timeoutMs: (seconds + 60) * 1000,
      })
    );
    await Promise.all(servers.map((s) => waitForLog(s, "sync waiting", 1)));
    const result = await measure(servers);
    await servers[0]!.ok("topic_join", { agent_name: "waker", topic_id: topic.topic_id });
    await servers[0]!.call("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: "wake up" }],
      wait_seconds: 0,
    });
    const results = await Promise.all(waits);
    if (results.some((r) => (r.structuredContent as { status: string }).status !== "ready")) {
      throw new Error("a waiting peer did not get the wake-up message");
    }
    return result;
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}
