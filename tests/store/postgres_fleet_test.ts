/**
 * A bus across hosts, tested as hosts: PostgreSQL in one network namespace,
 * agent-bus processes in others that reach it by IP only over veth links
 * (`tests/_helpers/netns.ts`), no shared files. A conversation across them;
 * a host that freezes mid-write with its link pulled, which must not hold
 * the bus for more than seconds; a host whose link is down for 15 s,
 * whose waiter still gets every message sent meanwhile once it is back; a
 * host whose path to the database stalls for 60 s without closing; a
 * restart of PostgreSQL and a host killed mid-send.
 * Skipped, with the reason, without root, `ip netns` or PostgreSQL.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { netnsUnavailable } from "../_helpers/netns.ts";
import { inheritedEnv, type Peer, readTopic, startPeer, until } from "../_helpers/peer.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { startNodeSessions } from "../_helpers/node_sessions.ts";
import { fleetWithPostgres, peerOn, stallProxyOn, urlOn } from "../_helpers/pg_fleet.ts";
import { postgresBin } from "../_helpers/postgres.ts";

const bin = await postgresBin();
const skip = "unavailable" in bin ? bin.unavailable : await netnsUnavailable();
/** The test's name, saying why it is skipped where it is. */
const named = (name: string) => skip ? `${name} (skipped: ${skip})` : name;

const FREEZE = fileURLToPath(new URL("../_helpers/freeze_in_write.ts", import.meta.url));

type Sent = { message: { message_id: string; seq: number }; duplicate: boolean };

/** The 99th percentile of `values` (0 for none). */
function p99Of(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length * 0.99)] ?? 0;
}

/**
 * Send one message to `topicId` every 50 ms until `until` (a `performance.now()` time), as a host
 * that carries on while another has trouble: what was acknowledged, and the sends' p99.
 */
async function keepSending(peer: Peer, topicId: unknown, until: number) {
  const acknowledged: string[] = [];
  const latencies: number[] = [];
  for (let i = 0; performance.now() < until; i++) {
    const started = performance.now();
    const sent = await peer.ok("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: `meanwhile ${i}` }],
      wait_seconds: 0,
    });
    latencies.push(performance.now() - started);
    acknowledged.push(...(sent.sent as Sent[]).map((s) => s.message.message_id));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { acknowledged, p99: p99Of(latencies), count: latencies.length };
}

/**
 * The bound a latency keeps while another host has trouble: `floorMs`, or
 * {@linkcode BUSY_FACTOR} times what it was in this run before the trouble
 * began, whichever is more. A quiet machine meets the floor; a busy one is
 * compared with itself. (A host that waited for the troubled one would take
 * seconds: the server's timeouts free its locks after 4.)
 */
function boundOf(baselineP99: number, floorMs: number): number {
  return Math.max(floorMs, BUSY_FACTOR * baselineP99);
}
const BUSY_FACTOR = 5;
/** How long the latencies are measured before the trouble, for {@linkcode boundOf}. */
const BASELINE_MS = 3000;

Deno.test({
  name: named("two hosts reaching PostgreSQL by IP only hold a conversation"),
  ignore: skip !== undefined,
}, async () => {
  await using setup = await fleetWithPostgres(2);
  await using a = await peerOn(setup, 0);
  await using b = await peerOn(setup, 1);
  const topic = await a.ok("topic_create", { name: "across-hosts" });
  await a.ok("topic_join", { agent_name: "alice", topic_id: topic.topic_id });
  await b.ok("topic_join", { agent_name: "bob", topic_id: topic.topic_id });
  const waiting = b.ok("sync", { topic_id: topic.topic_id, wait_seconds: 20 });
  await a.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "hello from host one" }],
    wait_seconds: 0,
  });
  const got = await waiting;
  assert.deepEqual(
    (got.received as { sender: string; content_markdown: string }[]).map((m) => m.content_markdown),
    ["hello from host one"],
  );
  const answer = a.ok("sync", { topic_id: topic.topic_id, wait_seconds: 20 });
  await b.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "hello back from host two" }],
    wait_seconds: 0,
  });
  const back = await answer;
  assert.equal((back.received as { sender: string }[])[0]!.sender, "bob");
});

Deno.test({
  name: named(
    "a host frozen mid-write, its link pulled, holds the bus's lock only until the server's timeouts free it (4 s; 10 s at most on a busy machine)",
  ),
  ignore: skip !== undefined,
}, async () => {
  await using setup = await fleetWithPostgres(2);
  const [one] = setup.fleet.hosts;
  await using b = await peerOn(setup, 1);
  await b.ok("topic_create", { name: "before" });

  const frozen = new Deno.Command(one!.exec[0]!, {
    args: [...one!.exec.slice(1), Deno.execPath(), "run", "-A", FREEZE, urlOn(setup, 0)],
    env: inheritedEnv(),
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = frozen.stdout.getReader();
  const { value } = await reader.read();
  assert.match(new TextDecoder().decode(value), /holding/);
  const holding = performance.now();
  await setup.fleet.linkDown(one!);
  frozen.kill("SIGKILL");
  await frozen.status;
  reader.releaseLock();

  // The other host's next write waits for the lock the frozen one left on the server.
  const result = await b.call("topic_create", { name: "after" });
  const freedAfter = performance.now() - holding;
  assert.ok(!result.isError, JSON.stringify(result.structuredContent));
  // The server frees it 4 s after the host fell silent (tcp_user_timeout, idle_in_transaction);
  // a lock that waited for TCP's own timeouts would be held for minutes.
  assert.ok(freedAfter <= 10_000, `the lock was freed after ${freedAfter.toFixed(0)} ms`);
});

Deno.test({
  name: named(
    "a host's link down for 15 s: the other host keeps sending, and the first gets every message once back",
  ),
  ignore: skip !== undefined,
}, async () => {
  await using setup = await fleetWithPostgres(2);
  const [one] = setup.fleet.hosts;
  await using a = await peerOn(setup, 0);
  await using b = await peerOn(setup, 1);
  const topic = await b.ok("topic_create", { name: "outage" });
  await a.ok("topic_join", { agent_name: "cut-off", topic_id: topic.topic_id });
  await b.ok("topic_join", { agent_name: "connected", topic_id: topic.topic_id });

  // Host two's sends before the trouble, on a topic of their own: what this machine gives now.
  const calm = (await b.ok("topic_create", { name: "calm" })).topic_id;
  await b.ok("topic_join", { agent_name: "calm", topic_id: calm });
  const baseline = await keepSending(b, calm, performance.now() + BASELINE_MS);

  // Host one waits for news, then loses its link.
  const waiting = a.call("sync", { topic_id: topic.topic_id, wait_seconds: 60 });
  await setup.fleet.linkDown(one!);
  const downAt = performance.now();
  // Meanwhile host one's agent tries to speak; the call must end, not hang.
  const attempt = a.call("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "said while cut off", client_message_id: "cut-1" }],
    wait_seconds: 0,
  });
  const { acknowledged, p99 } = await keepSending(b, topic.topic_id, downAt + 15_000);
  await setup.fleet.linkUp(one!);
  const upAt = performance.now();

  const tried = await attempt;
  if (tried.isError) {
    const error = (tried.structuredContent as { error: { code: string } }).error;
    assert.equal(error.code, "DB_UNAVAILABLE");
  }
  // The waiter ends (woken by the messages, or failed while the link was down).
  const woke = await waiting;
  assert.ok(performance.now() - upAt < 20_000, "the waiter was not left to its 60 s");

  // Once back, a retry with the same client_message_id is stored at most once…
  let retried;
  for (;;) {
    retried = await a.call("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: "said while cut off", client_message_id: "cut-1" }],
      wait_seconds: 0,
      max_items: 1,
    });
    if (!retried.isError) break;
    assert.ok(performance.now() - upAt < 20_000, "host one is usable again within 20 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // …and host one reads every message host two had acknowledged meanwhile.
  // (The send made while cut off may have gone through once the link was back: what it and the
  // waiter received counts as read.)
  const seen = new Set<string>();
  for (const result of [tried, woke, retried]) {
    if (result.isError) continue;
    for (const m of (result.structuredContent as { received: { message_id: string }[] }).received) {
      seen.add(m.message_id);
    }
  }
  for (const m of await readTopic(a, topic.topic_id)) seen.add(m.message_id);
  assert.deepEqual(acknowledged.filter((id) => !seen.has(id)), [], "0 acknowledged lost");
  await using auditor = await peerOn(setup, 1);
  await auditor.ok("topic_join", { agent_name: "auditor", topic_id: topic.topic_id });
  const stored = (await readTopic(auditor, topic.topic_id)).map((m) => m.content_markdown);
  assert.equal(stored.filter((c) => c === "said while cut off").length, 1, "stored once");
  const bound = boundOf(baseline.p99, 1000);
  assert.ok(
    p99 < bound,
    `the other host's sends kept going (p99 ${p99.toFixed(0)} ms, before ${
      baseline.p99.toFixed(0)
    } ms)`,
  );
});

Deno.test({
  name: named(
    "across hosts, PostgreSQL restarted and then a host killed mid-send: nothing acknowledged is lost or stored twice",
  ),
  ignore: skip !== undefined,
}, async () => {
  await using setup = await fleetWithPostgres(2);
  const doomed = await peerOn(setup, 0);
  await using survivor = await peerOn(setup, 1);
  const topic = await survivor.ok("topic_create", { name: "restart-and-kill" });
  const joined = await doomed.ok("topic_join", { agent_name: "doomed", topic_id: topic.topic_id });
  await survivor.ok("topic_join", { agent_name: "survivor", topic_id: topic.topic_id });

  // Both hosts send, each message with its client_message_id, until told to stop (or killed).
  const acknowledged: string[] = [];
  let sending = true;
  const inFlight = new Map<string, string>();
  // What each host's sends got, to tell a slow recovery from a stuck host if a wait times out.
  const outcomes = new Map<string, { acknowledged: number; refused: number; last?: string }>();
  const sendFrom = async (peer: Peer, name: string) => {
    for (let i = 0; sending; i++) {
      const id = `${name}-${i}`;
      inFlight.set(name, id);
      const result = await peer.call("sync", {
        topic_id: topic.topic_id,
        outbox: [{ content_markdown: id, client_message_id: id }],
        wait_seconds: 0,
      }).catch(() => undefined); // the doomed host's connection ends with its process
      if (result === undefined) return;
      const outcome = outcomes.get(name) ?? { acknowledged: 0, refused: 0 };
      outcomes.set(name, outcome);
      if (!result.isError) {
        acknowledged.push(
          ...(result.structuredContent as { sent: Sent[] }).sent.map((s) => s.message.message_id),
        );
        outcome.acknowledged++;
      } else {
        outcome.refused++;
        outcome.last = JSON.stringify(result.structuredContent?.error);
      }
    }
  };
  const doomedSends = sendFrom(doomed, "doomed");
  const survivorSends = sendFrom(survivor, "survivor");
  await until(() => acknowledged.length >= 20, { what: "traffic before the restart" });
  await setup.pg.stop("immediate");
  await setup.pg.start();
  let before = acknowledged.length;
  // Each host's bus reconnects on its next call; 60 s allows for a machine busy enough that a bus
  // restarts slowly, and a timeout says what each host's sends got meanwhile.
  await until(() => acknowledged.length >= before + 20, {
    timeoutMs: 60_000,
    what: "traffic from both hosts after the restart",
  }).catch((error) => {
    throw new Error(`${error.message}: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });

  // The doomed host dies in the middle of whatever send it was making.
  before = acknowledged.length;
  doomed.kill("SIGKILL");
  await doomedSends;
  const cut = inFlight.get("doomed");
  await doomed.close();
  await until(() => acknowledged.length >= before + 10, { what: "the survivor goes on" });
  sending = false;
  await survivorSends;

  // A new process on the same host takes the name back and retries the send it was making.
  await using reborn = await peerOn(setup, 0);
  await reborn.ok("topic_join", {
    agent_name: "doomed",
    topic_id: topic.topic_id,
    reclaim_token: joined.reclaim_token,
  });
  if (cut !== undefined) {
    await reborn.ok("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: cut, client_message_id: cut }],
      wait_seconds: 0,
    });
  }
  await using auditor = await peerOn(setup, 1);
  await auditor.ok("topic_join", { agent_name: "auditor", topic_id: topic.topic_id });
  const stored = await readTopic(auditor, topic.topic_id);
  const ids = new Set(stored.map((m) => m.message_id));
  assert.deepEqual(acknowledged.filter((id) => !ids.has(id)), [], "0 acknowledged lost");
  const contents = stored.map((m) => m.content_markdown);
  assert.equal(new Set(contents).size, contents.length, "no message stored twice");
  if (cut !== undefined) assert.ok(contents.includes(cut), "the retried send is stored");
});

Deno.test({
  name: named(
    "one host's path to PostgreSQL stalls for 60 s: the other host's sends and the stalled node's pings keep their pace (p99 <= 100 ms, or 5x their own before the stall on a busy machine), nothing acknowledged is lost, every waiter gets every message",
  ),
  ignore: skip !== undefined,
}, async () => {
  await using setup = await fleetWithPostgres(2);
  await using proxy = await stallProxyOn(setup, 0);
  const stalledHost = setup.fleet.hosts[0]!;
  // Host one: a sender, a waiter and an HTTP node with two sessions (one sending, one
  // pinging), all through the proxy. Host two: a sender, directly.
  await using sender = await startPeer({ dbPath: proxy.url, prefix: stalledHost.exec });
  await using waiter = await startPeer({ dbPath: proxy.url, prefix: stalledHost.exec });
  // (Two session workers: the sessions land on different ones, and the host's CPU is shared.)
  await using node = await startHttpServer({
    dbPath: proxy.url,
    prefix: stalledHost.exec,
    env: { AGENT_BUS_HTTP_WORKERS: "2" },
  });
  await using other = await peerOn(setup, 1);
  const mine = (await other.ok("topic_create", { name: "stalled host's topic" })).topic_id;
  const theirs = (await other.ok("topic_create", { name: "other host's topic" })).topic_id;
  const nodes = (await other.ok("topic_create", { name: "stalled node's topic" }))
    .topic_id as string;
  await using sessions = await startNodeSessions(node.url, nodes, stalledHost.exec);
  await sender.ok("topic_join", { agent_name: "stuck", topic_id: mine });
  await waiter.ok("topic_join", { agent_name: "waits", topic_id: theirs });
  await other.ok("topic_join", { agent_name: "goes-on", topic_id: theirs });

  // Before the stall, on a topic of their own: what this machine gives now.
  const calm = (await other.ok("topic_create", { name: "calm" })).topic_id;
  await other.ok("topic_join", { agent_name: "calm", topic_id: calm });
  const baseline = await keepSending(other, calm, performance.now() + BASELINE_MS);
  const baselinePings = (await sessions.run(BASELINE_MS / 1000)).pings;

  const waiting = waiter.call("sync", { topic_id: theirs, wait_seconds: 120 }, {
    timeoutMs: 180_000,
  });
  await proxy.stall();
  const stalledAt = performance.now();
  // The stalled host's agent speaks: the call must end, not hang.
  const said = { content_markdown: "said while stalled", client_message_id: "stalled-1" };
  const attempt = sender.call("sync", { topic_id: mine, outbox: [said], wait_seconds: 0 });
  const onNode = sessions.run(60);
  const { acknowledged, p99, count } = await keepSending(other, theirs, stalledAt + 60_000);
  const { pings } = await onNode;
  const tried = await attempt;
  await proxy.resume();
  const resumedAt = performance.now();
  if (tried.isError) {
    assert.equal(
      (tried.structuredContent as { error: { code: string } }).error.code,
      "DB_UNAVAILABLE",
    );
  }

  // After the stall: the stalled host's retry is stored once, and its waiter reads everything.
  let retried;
  for (;;) {
    retried = await sender.call("sync", { topic_id: mine, outbox: [said], wait_seconds: 0 });
    if (!retried.isError) break;
    assert.ok(performance.now() - resumedAt < 20_000, "host one is usable again within 20 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const woke = await waiting;
  const seen = new Set<string>();
  if (!woke.isError) {
    for (const m of (woke.structuredContent as { received: { message_id: string }[] }).received) {
      seen.add(m.message_id);
    }
  }
  for (const m of await readTopic(waiter, theirs)) seen.add(m.message_id);
  assert.deepEqual(acknowledged.filter((id) => !seen.has(id)), [], "0 acknowledged lost");
  await using auditor = await peerOn(setup, 1);
  await auditor.ok("topic_join", { agent_name: "auditor", topic_id: mine });
  const stored = (await readTopic(auditor, mine)).map((m) => m.content_markdown);
  assert.deepEqual(stored, ["said while stalled"], "stored once");
  assert.ok(
    p99 <= boundOf(baseline.p99, 100),
    `the other host's sends, p99 ${p99.toFixed(1)} ms over ${count} (before: ${
      baseline.p99.toFixed(1)
    } ms)`,
  );
  const pingP99 = p99Of(pings);
  const pingBefore = p99Of(baselinePings);
  assert.ok(
    pingP99 <= boundOf(pingBefore, 100),
    `ping on the stalled node, p99 ${pingP99.toFixed(1)} ms (before: ${pingBefore.toFixed(1)} ms)`,
  );
});
