/**
 * `GET /api/events`: live Server-Sent Events from a real `agent-bus http`
 * process, driven by agents in other processes (stdio MCP peers).
 */

import assert from "node:assert/strict";
import { connectAgent, post } from "../_helpers/chat.ts";
import { cli } from "../_helpers/cli.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { openEvents, type SseEvent } from "../_helpers/sse.ts";
import { tmpDir } from "../_helpers/tmp.ts";

type Msg = { topic_id: string; message: { seq: number; sender: string; content_markdown: string } };

async function say(agent: Peer, topicId: string, ...texts: string[]) {
  await agent.ok("sync", {
    topic_id: topicId,
    outbox: texts.map((content_markdown) => ({ content_markdown })),
    wait_seconds: 0,
  });
}

const isMessage = (e: SseEvent) => e.event === "message";

Deno.test("events stream messages, topic changes and presence from other processes as they commit", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using agent = await startPeer({ dbPath });
  await using events = await openEvents(`${server.url}/api/events`);
  const ready = await events.next((e) => e.event === "ready");
  assert.deepEqual(ready.data, { last_event_id: 0 });

  const topicId = (await agent.ok("topic_create", { name: "alpha" })).topic_id as string;
  const created = await events.next((e) => e.event === "topic");
  assert.deepEqual(
    [(created.data as { topic_id: string }).topic_id, (created.data as { name: string }).name],
    [topicId, "alpha"],
  );

  await agent.ok("topic_join", { agent_name: "codex", topic_id: topicId });
  await say(agent, topicId, "one", "two", "three");
  const got = [
    await events.next(isMessage),
    await events.next(isMessage),
    await events.next(isMessage),
  ];
  assert.deepEqual(
    got.map((e) => [(e.data as Msg).message.seq, (e.data as Msg).message.content_markdown]),
    [[1, "one"], [2, "two"], [3, "three"]],
  );
  assert.ok(Number(got[2]!.id) > Number(got[0]!.id), "event ids grow");
  const summary = await events.next((e) =>
    e.event === "topic" && (e.data as { last_seq: number }).last_seq === 3
  );
  assert.equal((summary.data as { messages: number }).messages, 3);

  // Presence: codex waits in sync, then a message wakes it.
  const waiting = agent.ok("sync", { topic_id: topicId, wait_seconds: 20 });
  const present = await events.next((e) =>
    e.event === "presence" &&
    (e.data as { agents: { waiting: boolean }[] }).agents.some((a) => a.waiting)
  );
  assert.deepEqual(
    (present.data as { topic_id: string; agents: { agent_name: string }[] }).agents.map((a) =>
      a.agent_name
    ),
    ["codex"],
  );
  const post = await fetch(`${server.url}/api/topics/${topicId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content_markdown: "wake" }),
  });
  assert.equal(post.status, 201);
  await post.body?.cancel();
  await waiting;
  const operator = await events.next(isMessage);
  assert.equal((operator.data as Msg).message.sender, "operator");
  await events.next((e) =>
    e.event === "presence" &&
    (e.data as { agents: { waiting: boolean }[] }).agents.every((a) => !a.waiting)
  );

  await agent.ok("topic_close", { topic_id: topicId, reason: "done" });
  const closed = await events.next((e) => e.event === "topic");
  assert.equal((closed.data as { status: string }).status, "closed");

  const deleted = await cli(["topics", "delete", topicId, "--yes"], { AGENT_BUS_DB: dbPath });
  assert.equal(deleted.code, 0, deleted.stderr);
  const gone = await events.next((e) => e.event === "topic");
  assert.deepEqual(gone.data, { topic_id: topicId, deleted: true });
});

Deno.test("a reconnect with Last-Event-ID gets every missed message in order, then the state", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using agent = await startPeer({ dbPath });
  const alpha = (await agent.ok("topic_create", { name: "alpha" })).topic_id as string;
  const beta = (await agent.ok("topic_create", { name: "beta" })).topic_id as string;
  await agent.ok("topic_join", { agent_name: "codex", topic_id: alpha });
  await agent.ok("topic_join", { agent_name: "codex", topic_id: beta });
  await say(agent, alpha, "a1");

  const first = await openEvents(`${server.url}/api/events`);
  const lastId = (await first.next((e) => e.event === "ready")).id!;
  await first.close();

  await say(agent, alpha, "a2", "a3");
  await say(agent, beta, "b1");
  await say(agent, alpha, "a4");

  await using again = await openEvents(`${server.url}/api/events`, { "last-event-id": lastId });
  const replayed: string[] = [];
  for (let i = 0; i < 4; i++) {
    replayed.push(((await again.next(isMessage)).data as Msg).message.content_markdown);
  }
  assert.deepEqual(replayed, ["a2", "a3", "b1", "a4"]);
  const topics = new Set<string>();
  for (;;) {
    const event = await again.next((e) => e.event !== "presence");
    if (event.event === "ready") break;
    assert.equal(event.event, "topic");
    topics.add((event.data as { name: string }).name);
  }
  assert.deepEqual([...topics].sort(), ["alpha", "beta"]);

  // The same through the query string, filtered to one topic.
  await using filtered = await openEvents(
    `${server.url}/api/events?topic_id=${beta}&last_event_id=${lastId}`,
  );
  const only = await filtered.next(isMessage);
  assert.equal((only.data as Msg).message.content_markdown, "b1");
  await filtered.next((e) => e.event === "ready");
  await say(agent, alpha, "a5");
  await say(agent, beta, "b2");
  const live = await filtered.next(isMessage);
  assert.equal((live.data as Msg).message.content_markdown, "b2", "alpha's a5 is filtered out");
});

Deno.test("a reconnect that missed too much is told to reset; idle streams get keep-alives", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({
    dbPath,
    env: { AGENT_BUS_HTTP_KEEPALIVE_SECONDS: "1" },
  });
  await using agent = await startPeer({ dbPath });
  const topicId = (await agent.ok("topic_create", { name: "busy" })).topic_id as string;
  await agent.ok("topic_join", { agent_name: "codex", topic_id: topicId });
  for (let i = 0; i < 21; i++) {
    await say(agent, topicId, ...Array.from({ length: 50 }, (_, j) => `m${i * 50 + j}`));
  }
  await using stale = await openEvents(`${server.url}/api/events?last_event_id=0`);
  const reset = await stale.next((e) => e.event === "reset" || e.event === "message");
  assert.equal(reset.event, "reset");
  await stale.next((e) => e.event === "ready");
  await stale.until(": keep-alive", 5000);

  assert.equal((await fetch(`${server.url}/api/events?last_event_id=x`)).status, 400);
});

Deno.test("a chatbus handoff or stop is followed by msg.handoff / msg.stop, live and on replay", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using chat = await startPeer({ dbPath, args: ["--profile", "chatbus"] });
  const alice = await connectAgent(chat, "handoffs");
  await using events = await openEvents(`${server.url}/api/events`);
  const lastId = (await events.next((e) => e.event === "ready")).id!;
  const handed = await post(alice, "over to you", { metadata: { handoff_target: "bob" } });
  const stopped = await post(alice, "done", { metadata: { stop_reason: "complete" } });
  const handoff = await events.next((e) => e.event === "msg.handoff");
  assert.deepEqual(handoff.data, {
    topic_id: alice.threadId,
    msg_id: handed.msg_id,
    seq: handed.seq,
    from: (alice.result.agent as { name: string }).name,
    to: "bob",
  });
  const stop = await events.next((e) => e.event === "msg.stop");
  assert.equal((stop.data as { reason: string }).reason, "complete");
  assert.equal((stop.data as { msg_id: string }).msg_id, stopped.msg_id);

  await using replay = await openEvents(`${server.url}/api/events`, { "last-event-id": lastId });
  const kinds: string[] = [];
  for (;;) {
    const event = await replay.next(() => true);
    if (event.event === "ready") break;
    if (event.event !== "topic" && event.event !== "presence") kinds.push(event.event!);
  }
  assert.deepEqual(kinds, ["message", "msg.handoff", "message", "msg.stop"]);
});

Deno.test("round after round, every message of another process reaches a stream before the summary that counts it", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using agent = await startPeer({ dbPath });
  // The case that once lost three messages on PostgreSQL, repeated: a fresh stream (and so a
  // fresh hub) each round, a topic made, joined and spoken in from another process.
  for (let round = 0; round < 40; round++) {
    await using events = await openEvents(`${server.url}/api/events`);
    await events.next((e) => e.event === "ready");
    const topicId = (await agent.ok("topic_create", { name: `round ${round}` })).topic_id as string;
    await agent.ok("topic_join", { agent_name: "codex", topic_id: topicId });
    await say(agent, topicId, "one", "two", "three");
    const sent: number[] = [];
    while (sent.length < 3) {
      const event = await events.next((e) =>
        (e.data as { topic_id?: string }).topic_id === topicId &&
        (e.event === "message" || e.event === "topic")
      );
      if (event.event === "message") {
        sent.push((event.data as Msg).message.seq);
        continue;
      }
      const counted = (event.data as { last_seq: number }).last_seq;
      assert.ok(counted <= sent.length, `round ${round}: a summary counted ${counted} of ${sent}`);
    }
    assert.deepEqual(sent, [1, 2, 3], `round ${round}`);
  }
});
