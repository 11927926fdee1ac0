/**
 * A stall on one host's path to PostgreSQL, across network namespaces: the
 * proxy between host one's agent-bus and the database stops forwarding for
 * `seconds` without closing anything, while host one's agent keeps trying
 * to send. Measured meanwhile: the other host's sends to another topic,
 * `ping` answered by host one's stalled stdio server (its session busy with
 * the sends that wait for the database), and `ping` answered to one session
 * of host one's `agent-bus http` node while another of its sessions keeps
 * sending into the stall. Needs root, `ip netns` and Debian's
 * PostgreSQL; undefined, with the reason, where they are missing.
 *
 * @module
 */

import { startHttpServer } from "../tests/_helpers/http.ts";
import { netnsUnavailable } from "../tests/_helpers/netns.ts";
import { startNodeSessions } from "../tests/_helpers/node_sessions.ts";
import { startPeer } from "../tests/_helpers/peer.ts";
import { fleetWithPostgres, peerOn, stallProxyOn } from "../tests/_helpers/pg_fleet.ts";
import { postgresBin } from "../tests/_helpers/postgres.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** What {@linkcode benchStall} measured. */
export interface StallResult {
  seconds: number;
  /** The other host's sends (one message each, every 50 ms). */
  otherSend: Distribution;
  /** `ping` on the stalled host's stdio server, every 100 ms. */
  stalledPing: Distribution;
  /** `ping` on another session of the stalled host's HTTP node, every 100 ms. */
  nodePing: Distribution;
  /** Sends the other host had acknowledged, and how many of them a reader found after. */
  acknowledged: number;
  lost: number;
}

/** Why the stall cannot be benchmarked here, or undefined when it can. */
export async function stallUnavailable(): Promise<string | undefined> {
  const bin = await postgresBin();
  return "unavailable" in bin ? bin.unavailable : await netnsUnavailable();
}

/** Stall host one's path to the database for `seconds` and measure both hosts meanwhile. */
export async function benchStall(seconds: number): Promise<StallResult> {
  await using setup = await fleetWithPostgres(2);
  await using proxy = await stallProxyOn(setup, 0);
  await using stalled = await startPeer({
    dbPath: proxy.url,
    prefix: setup.fleet.hosts[0]!.exec,
  });
  await using node = await startHttpServer({
    dbPath: proxy.url,
    prefix: setup.fleet.hosts[0]!.exec,
  });
  await using other = await peerOn(setup, 1);
  const mine = (await other.ok("topic_create", { name: "stalled" })).topic_id;
  const theirs = (await other.ok("topic_create", { name: "carries on" })).topic_id;
  const nodes = (await other.ok("topic_create", { name: "stalled node" })).topic_id as string;
  await using sessions = await startNodeSessions(node.url, nodes, setup.fleet.hosts[0]!.exec);
  await stalled.ok("topic_join", { agent_name: "stuck", topic_id: mine });
  await other.ok("topic_join", { agent_name: "goes-on", topic_id: theirs });

  await proxy.stall();
  const until = performance.now() + seconds * 1000;
  const during = () => performance.now() < until;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const stuck = (async () => {
    for (let i = 0; during(); i++) {
      await stalled.call("sync", {
        topic_id: mine,
        outbox: [{ content_markdown: `stuck ${i}`, client_message_id: `stuck-${i}` }],
        wait_seconds: 0,
      }, { timeoutMs: 120_000 });
    }
  })();
  const pings: number[] = [];
  const pinging = (async () => {
    while (during()) {
      const started = performance.now();
      await stalled.client.ping({ timeout: 120_000 });
      pings.push(performance.now() - started);
      await pause(100);
    }
  })();
  const onNode = sessions.run(seconds);
  const sends: number[] = [];
  let acknowledged = 0;
  for (let i = 0; during(); i++) {
    const started = performance.now();
    await other.ok("sync", {
      topic_id: theirs,
      outbox: [{ content_markdown: `meanwhile ${i}` }],
      wait_seconds: 0,
    });
    sends.push(performance.now() - started);
    acknowledged++;
    await pause(50);
  }
  await proxy.resume();
  const [, , { pings: nodePings }] = await Promise.all([stuck, pinging, onNode]);

  await using reader = await peerOn(setup, 1);
  await reader.ok("topic_join", { agent_name: "reader", topic_id: theirs });
  let found = 0;
  for (;;) {
    const got = await reader.ok("sync", { topic_id: theirs, max_items: 20, wait_seconds: 0 });
    const count = (got.received as unknown[]).length;
    if (count === 0) break;
    found += count;
  }
  return {
    seconds,
    otherSend: distribution(sends),
    stalledPing: distribution(pings),
    nodePing: distribution(nodePings),
    acknowledged,
    lost: Math.max(0, acknowledged - found),
  };
}
