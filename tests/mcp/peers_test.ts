/**
 * Several real server processes on one database file, driven by the MCP
 * SDK's Client over stdio: the scenarios of the Agent Bus v6.3 contract
 * that need more than one process.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { startPeer, textOf, until } from "../_helpers/peer.ts";
import { holdWriteLock, sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const DEBUG = { AGENT_BUS_LOG_LEVEL: "debug" };

Deno.test("two peers converse through sync across processes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath });
  const topic = await a.ok("topic_create", { name: "pink" });
  await a.ok("topic_join", { agent_name: "red-squirrel", topic_id: topic.topic_id });
  const joinedB = await b.ok("topic_join", { agent_name: "crimson-cat", name: "pink" });
  assert.equal(joinedB.topic_id, topic.topic_id, "joining by name resolves the same topic");

  const sent = await a.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "hello from A", message_type: "question" }],
    wait_seconds: 0,
  });
  assert.equal(sent.received_count, 0);
  const sentItem = (sent.sent as { message: Record<string, unknown>; duplicate: boolean }[])[0]!;
  assert.equal(sentItem.duplicate, false);
  assert.equal(sentItem.message.sender, "red-squirrel");

  const got = await b.call("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  const gotData = got.structuredContent as Record<string, unknown>;
  assert.equal(gotData.status, "ready");
  assert.equal(gotData.received_count, 1);
  assert.match(textOf(got), /hello from A/, "the body is in the text too");
  const question = (gotData.received as Record<string, unknown>[])[0]!;

  await b.ok("sync", {
    topic_id: topic.topic_id,
    outbox: JSON.stringify([{
      content_markdown: "answer from B",
      message_type: "answer",
      reply_to: question.message_id,
    }]),
    wait_seconds: 0,
  });
  const reply = await a.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  const replies = reply.received as Record<string, unknown>[];
  assert.equal(replies.length, 1);
  assert.equal(replies[0]!.sender, "crimson-cat");
  assert.equal(replies[0]!.reply_to, question.message_id);

  const presence = await a.ok("topic_presence", { topic_id: topic.topic_id, window_seconds: 3600 });
  assert.deepEqual(
    (presence.peers as { agent_name: string }[]).map((p) => p.agent_name).sort(),
    ["crimson-cat", "red-squirrel"],
  );

  await a.ok("cursor_reset", { topic_id: topic.topic_id, last_seq: 0 });
  const replay = await a.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.deepEqual(
    (replay.received as { content_markdown: string }[]).map((m) => m.content_markdown),
    ["answer from B"],
    "a replay returns the other peer's messages only",
  );

  const found = await b.ok("messages_search", {
    query: "hello",
    mode: "fts",
    include_content: true,
  });
  const hit = (found.results as Record<string, unknown>[])[0]!;
  assert.equal(hit.content_markdown, "hello from A");
  assert.equal(hit.topic_name, "pink");
});

Deno.test("a reserved name is refused to another process and reclaimed with its token", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const first = await startPeer({ dbPath });
  const topic = await first.ok("topic_create", { name: "names" });
  const joined = await first.call("topic_join", { agent_name: "codex", topic_id: topic.topic_id });
  const token = (joined.structuredContent as { reclaim_token: string }).reclaim_token;
  assert.match(textOf(joined), new RegExp(`reclaim_token=${token}`));

  await using second = await startPeer({ dbPath });
  const refused = await second.fail("topic_join", {
    agent_name: "codex",
    topic_id: topic.topic_id,
  });
  assert.equal(refused.code, "AGENT_NAME_IN_USE");
  assert.equal(refused.structured.requested_agent_name, "codex");
  assert.ok((refused.structured.suggested_agent_names as string[]).includes("codex reviewer"));
  await second.ok("topic_join", { agent_name: "codex reviewer", topic_id: topic.topic_id });
  await second.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "review notes" }],
    wait_seconds: 0,
  });

  first.kill("SIGKILL");
  await first.close();
  await using third = await startPeer({ dbPath });
  const stillTaken = await third.fail("topic_join", {
    agent_name: "codex",
    topic_id: topic.topic_id,
  });
  assert.equal(stillTaken.code, "AGENT_NAME_IN_USE", "presence expiry does not free a name");
  const reclaimed = await third.ok("topic_join", {
    agent_name: "codex",
    topic_id: topic.topic_id,
    reclaim_token: token,
  });
  assert.equal(reclaimed.agent_name, "codex");
  assert.equal(reclaimed.reclaim_token, token);
  const inbox = await third.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.deepEqual(
    (inbox.received as { content_markdown: string }[]).map((m) => m.content_markdown),
    ["review notes"],
  );
});

Deno.test("a waiting sync returns ready when another process sends", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath, env: DEBUG });
  const topic = await a.ok("topic_create", { name: "wait" });
  await a.ok("topic_join", { agent_name: "sender", topic_id: topic.topic_id });
  await b.ok("topic_join", { agent_name: "waiter", topic_id: topic.topic_id });
  const started = Date.now();
  const waiting = b.call("sync", { topic_id: topic.topic_id, wait_seconds: 30 });
  await until(() => b.stderr().includes("sync waiting"), { what: "B to start waiting" });
  await a.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "ping across processes" }],
    wait_seconds: 0,
  });
  const result = (await waiting).structuredContent as Record<string, unknown>;
  assert.equal(result.status, "ready");
  assert.equal(
    (result.received as { content_markdown: string }[])[0]!.content_markdown,
    "ping across processes",
  );
  assert.ok(Date.now() - started < 20_000, "it woke up instead of running into its timeout");
});

Deno.test("cancelling a waiting sync frees it at once and consumes nothing", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath, env: DEBUG });
  const topic = await a.ok("topic_create", { name: "cancel" });
  await a.ok("topic_join", { agent_name: "sender", topic_id: topic.topic_id });
  await b.ok("topic_join", { agent_name: "waiter", topic_id: topic.topic_id });
  const controller = new AbortController();
  const waiting = b.call("sync", { topic_id: topic.topic_id, wait_seconds: 120 }, {
    signal: controller.signal,
  });
  await until(() => b.stderr().includes("sync waiting"), { what: "B to start waiting" });
  controller.abort("user pressed escape");
  await assert.rejects(waiting);
  await until(() => b.stderr().includes("sync cancelled by the client"), {
    what: "the server to drop the wait",
  });
  const pong = await b.ok("ping");
  assert.equal(pong.ok, true);
  await a.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "after the cancel" }],
    wait_seconds: 0,
  });
  const later = await b.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.deepEqual(
    (later.received as { content_markdown: string }[]).map((m) => m.content_markdown),
    ["after the cancel"],
    "the cancelled call did not take the message",
  );
});

Deno.test("a waiting sync sends progress notifications when asked", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, env: { AGENT_BUS_PROGRESS_SECONDS: "1" } });
  const topic = await a.ok("topic_create", { name: "progress" });
  await a.ok("topic_join", { agent_name: "patient", topic_id: topic.topic_id });
  const progress: { progress: number; total?: number }[] = [];
  const result = await a.call("sync", { topic_id: topic.topic_id, wait_seconds: 2 }, {
    onprogress: (p) => progress.push(p),
    resetTimeoutOnProgress: true,
    timeoutMs: 30_000,
  });
  assert.equal((result.structuredContent as { status: string }).status, "timeout");
  assert.ok(progress.length >= 1, "at least one progress notification in 2 s, one a second");
  assert.equal(progress[0]!.total, 2);
});

Deno.test("topic_create reuse from three processes at once makes one topic", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath });
  await using c = await startPeer({ dbPath });
  const ids = await Promise.all(
    [a, b, c].map(async (peer) => (await peer.ok("topic_create", { name: "together" })).topic_id),
  );
  assert.equal(new Set(ids).size, 1);
});

Deno.test("a write blocked by another program's lock gives DB_BUSY, then recovers", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, env: { AGENT_BUS_BUSY_TIMEOUT_MS: "300" } });
  await a.ok("topic_create", { name: "before" });
  const release = await holdWriteLock(dbPath);
  try {
    const busy = await a.fail("topic_create", { name: "blocked" });
    assert.equal(busy.code, "DB_BUSY");
    const list = await a.ok("topic_list", {});
    assert.equal(list.count, 1, "reads still work while the lock is held");
  } finally {
    await release();
  }
  const after = await a.ok("topic_create", { name: "after" });
  assert.equal(after.name, "after");
});

sqliteTest(
  "a schema 5 database gives DB_SCHEMA_MISMATCH from every DB tool while ping works",
  "a file made by another version of the original program",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/old.sqlite`;
    const raw = new DatabaseSync(dbPath);
    raw.exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema_version', '5');",
    );
    raw.close();
    await using peer = await startPeer({ dbPath });
    assert.equal((await peer.ok("ping")).ok, true);
    const calls: [string, Record<string, unknown>][] = [
      ["topic_create", { name: "x" }],
      ["topic_list", {}],
      ["topic_resolve", { name: "x" }],
      ["topic_close", { topic_id: "x" }],
      ["topic_join", { agent_name: "a", topic_id: "x" }],
      ["topic_presence", { topic_id: "x" }],
      ["cursor_reset", { topic_id: "x" }],
      ["messages_search", { query: "x" }],
      ["sync", { topic_id: "x", wait_seconds: 0 }],
    ];
    for (const [name, args] of calls) {
      const failure = await peer.fail(name, args);
      assert.equal(failure.code, "DB_SCHEMA_MISMATCH", name);
      assert.match(failure.message, /agent-bus db wipe --yes/);
    }
  },
);

sqliteTest(
  "a database made by the original implementation opens and works",
  "the original implementation's SQLite file",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/original.sqlite`;
    const raw = new DatabaseSync(dbPath);
    raw.exec(await Deno.readTextFile(new URL("../fixtures/original_v6.sql", import.meta.url)));
    raw.close();
    await using bob = await startPeer({ dbPath });
    await using alice = await startPeer({ dbPath });
    const topic = await bob.ok("topic_resolve", { name: "legacy-topic" });
    assert.equal(topic.topic_id, "a1b2c3d4e5");
    await bob.ok("topic_join", { agent_name: "legacy-bob", topic_id: "a1b2c3d4e5" });
    assert.equal(
      (await alice.fail("topic_join", { agent_name: "alice", topic_id: "a1b2c3d4e5" })).code,
      "AGENT_NAME_IN_USE",
    );
    await alice.ok("topic_join", {
      agent_name: "alice",
      topic_id: "a1b2c3d4e5",
      reclaim_token: "alice-token-0123456789abcdef",
    });
    const sent = await bob.ok("sync", {
      topic_id: "a1b2c3d4e5",
      outbox: [{
        content_markdown: "Also update the zeppelin runbook",
        client_message_id: "bob-2",
      }],
      wait_seconds: 0,
    });
    assert.equal((sent.sent as { message: { seq: number } }[])[0]!.message.seq, 3);
    const dup = await bob.ok("sync", {
      topic_id: "a1b2c3d4e5",
      outbox: [{ content_markdown: "old idempotency key", client_message_id: "bob-1" }],
      wait_seconds: 0,
    });
    assert.equal((dup.sent as { duplicate: boolean }[])[0]!.duplicate, true);
    const inbox = await alice.ok("sync", { topic_id: "a1b2c3d4e5", wait_seconds: 0 });
    assert.deepEqual((inbox.received as { seq: number }[]).map((m) => m.seq), [3]);
    const found = await alice.ok("messages_search", { query: "zeppelin", mode: "fts" });
    assert.equal(found.count, 3);
    const check = new DatabaseSync(dbPath, { readOnly: true });
    const theirs = check.prepare("SELECT COUNT(*) AS n FROM messages_fts").get() as { n: number };
    assert.equal(theirs.n, 3, "the original's own triggers still index our writes");
    check.close();
  },
);
