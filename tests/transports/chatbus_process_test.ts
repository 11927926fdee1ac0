/**
 * The chatbus dialect across real processes: agents in separate stdio
 * servers wake each other, a v6.3 peer (`sync`) and chatbus agents share
 * one stream in both directions, a person's post from the CLI makes every
 * agent re-read, and the same tools are served over Streamable HTTP at
 * `/chatbus/mcp` (and at `/mcp` with `--mcp-profile chatbus`).
 */

import assert from "node:assert/strict";
import { connectAgent, post, wait } from "../_helpers/chat.ts";
import { cli } from "../_helpers/cli.ts";
import { connectHttp, startHttpServer } from "../_helpers/http.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const CHATBUS = ["--profile", "chatbus"];

Deno.test("a post in one process wakes a msg_wait parked in another within moments", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, args: CHATBUS });
  await using b = await startPeer({ dbPath, args: CHATBUS });
  const alice = await connectAgent(a, "cross");
  const bob = await connectAgent(b, "cross");
  const parked = wait(bob, { timeoutMs: 30_000 });
  // Wait until Bob is parked (he shows in the wait states), then post.
  for (let i = 0; i < 500; i++) {
    const state = await a.ok("thread_wait_state_get", { thread_id: alice.threadId });
    if (state.count === 1) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const sentAt = performance.now();
  await post(alice, "across processes");
  const woken = await parked;
  assert.deepEqual(woken.messages.map((m) => m.content), ["across processes"]);
  assert.ok(performance.now() - sentAt < 10_000);
  // Bob answers with the context msg_wait gave him.
  const answer = await post(bob, "received");
  assert.equal(answer.seq, 2);
});

Deno.test("one stream for three dialects: sync peers, chatbus agents and a person at the CLI", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using chat = await startPeer({ dbPath, args: CHATBUS });
  await using peer = await startPeer({ dbPath });
  const alice = await connectAgent(chat, "mixed");
  await peer.ok("topic_join", { agent_name: "v63-peer", topic_id: alice.threadId });

  // A chatbus post reaches a waiting sync.
  const syncing = peer.ok("sync", { topic_id: alice.threadId, wait_seconds: 30 });
  await post(alice, "from chatbus");
  const received = (await syncing).received as { sender: string; content_markdown: string }[];
  assert.deepEqual(received.map((m) => m.content_markdown), ["from chatbus"]);
  assert.equal(received[0]!.sender, "Test (m)");

  // A sync send wakes msg_wait, and makes a post with the older seq stale.
  const staleSeq = alice.seq;
  const staleToken = alice.replyToken;
  const parked = wait(alice, { timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 50));
  await peer.ok("sync", {
    topic_id: alice.threadId,
    outbox: [{ content_markdown: "from a v6.3 peer" }],
    wait_seconds: 0,
  });
  const woken = await parked;
  assert.deepEqual(woken.messages.map((m) => m.content), ["from a v6.3 peer"]);
  const stale = await chat.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "stale",
    expected_last_seq: staleSeq,
    reply_token: staleToken,
  });
  assert.ok(["SeqMismatchError", "ReplyTokenReplayError"].includes(stale.code), stale.code);

  await wait(alice); // after a sync error: returns at once with a fresh token

  // A person's post always lands, and makes the agent re-read before its next post.
  const human = await cli(["post", "mixed", "Hold the merge", "--as", "operator"], {
    AGENT_BUS_DB: dbPath,
  });
  assert.equal(human.code, 0, human.stderr);
  const refused = await chat.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "merging",
    expected_last_seq: alice.seq,
    reply_token: alice.replyToken,
  });
  assert.equal(refused.code, "SeqMismatchError");
  assert.deepEqual(
    (refused.structured.new_messages_1st_read as { author: string; content: string }[]).map((
      m,
    ) => [m.author, m.content]),
    [["operator", "Hold the merge"]],
  );
  await wait(alice);
  await post(alice, "holding the merge");
});

Deno.test("the chatbus tools over Streamable HTTP, at /chatbus/mcp and at /mcp when asked", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using http = await startHttpServer({ dbPath, args: ["--mcp-profile", "chatbus"] });
  await using one = await connectHttp(`${http.url}/chatbus/mcp`);
  await using two = await connectHttp(`${http.url}/mcp`);
  const tools = (await two.client.listTools()).tools.map((t) => t.name);
  assert.ok(tools.includes("msg_wait") && !tools.includes("sync"), "/mcp serves the chatbus tools");
  const alice = await connectAgent(one, "over-http");
  const bob = await connectAgent(two, "over-http");
  const parked = wait(bob, { timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 50));
  await post(alice, "hello over http");
  assert.deepEqual((await parked).messages.map((m) => m.content), ["hello over http"]);
  await post(bob, "and back");
  const back = await wait(alice);
  assert.deepEqual(back.messages.map((m) => m.content), ["and back"]);
  // Resources and prompts over HTTP too.
  const state = await two.client.readResource({ uri: `chat://threads/${alice.threadId}/state` });
  assert.equal(JSON.parse((state.contents[0] as { text: string }).text).latest_seq, 2);
  const prompt = await one.client.getPrompt({
    name: "summarize_thread",
    arguments: { topic: "over-http", transcript: "[1] a: hello" },
  });
  assert.match((prompt.messages[0]!.content as { text: string }).text, /over-http/);
  // bus_get_config says where each session is served: the URL it reached, not a fixed port.
  assert.equal((await one.ok("bus_get_config")).endpoint, `${http.url}/chatbus/mcp`);
  assert.equal((await two.ok("bus_get_config")).endpoint, `${http.url}/mcp`);
  const config = await one.client.readResource({ uri: "chat://bus/config" });
  assert.equal(
    JSON.parse((config.contents[0] as { text: string }).text).endpoint,
    `${http.url}/chatbus/mcp`,
  );
});

Deno.test("msg_wait sends progress notifications, and a cancelled one stops and leaves no wait state", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({
    dbPath,
    args: CHATBUS,
    env: { AGENT_BUS_PROGRESS_SECONDS: "1" },
  });
  const alice = await connectAgent(a, "patience");
  const progress: { progress: number; total?: number }[] = [];
  const timedOut = await a.call("msg_wait", {
    thread_id: alice.threadId,
    after_seq: alice.seq,
    timeout_ms: 2000,
    agent_id: alice.agentId,
    token: alice.token,
  }, { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeoutMs: 30_000 });
  assert.notEqual(timedOut.isError, true);
  assert.ok(progress.length >= 1, "at least one progress notification in 2 s, one a second");
  assert.equal(progress[0]!.total, 2);

  const controller = new AbortController();
  const cancelled = a.call("msg_wait", {
    thread_id: alice.threadId,
    after_seq: alice.seq,
    timeout_ms: 60_000,
    agent_id: alice.agentId,
    token: alice.token,
  }, { signal: controller.signal }).catch((error: Error) => error);
  for (let i = 0; i < 500; i++) {
    if ((await a.ok("thread_wait_state_get", { thread_id: alice.threadId })).count === 1) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const started = performance.now();
  controller.abort();
  assert.ok((await cancelled) instanceof Error, "the client sees its call cancelled");
  for (let i = 0; i < 500; i++) {
    if ((await a.ok("thread_wait_state_get", { thread_id: alice.threadId })).count === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal((await a.ok("thread_wait_state_get", { thread_id: alice.threadId })).count, 0);
  assert.ok(performance.now() - started < 10_000);
});
