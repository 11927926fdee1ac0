/**
 * The chatbus dialect (seed 002) through the SDK client: the research
 * file's black-box checklist (3.2) as far as the seed covers it. The sync
 * protocol (connect, strict posting, races, waits, anonymous authors) runs
 * against real server processes over stdio, one per agent, sharing a
 * database file; the rest in process, each client with its own server and
 * database connection. Cross-process wake-ups, HTTP, and a v6.3 peer and a person beside
 * chatbus agents: tests/transports/chatbus_process_test.ts.
 */

import assert from "node:assert/strict";
import { connectAgent, post, unpackBlocks, wait } from "../_helpers/chat.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { startPeer, textOf } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/**
 * Two chatbus servers on one fresh database, each with a connected client:
 * real processes over stdio for the sync protocol, or in this process
 * (each its own server and database connection) for the rest.
 */
async function twoClients(
  options: { processes?: boolean; env?: Record<string, string> } = {},
) {
  const tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const env = options.env ?? {};
  const one = () =>
    options.processes
      ? startPeer({ dbPath, env, args: ["--profile", "chatbus"] })
      : connectInProcess(dbPath, "chatbus", { env });
  const [a, b] = await Promise.all([one(), one()]);
  return {
    a,
    b,
    dbPath,
    async [Symbol.asyncDispose]() {
      await a[Symbol.asyncDispose]();
      await b[Symbol.asyncDispose]();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

Deno.test("the chatbus profile lists every tool of seed 002 with underscore names", async () => {
  await using clients = await twoClients();
  const names = (await clients.a.client.listTools()).tools.map((t) => t.name);
  assert.deepEqual(names.sort(), [
    "agent_heartbeat",
    "agent_list",
    "agent_register",
    "agent_resume",
    "agent_set_typing",
    "agent_unregister",
    "agent_update",
    "bus_connect",
    "bus_get_config",
    "close_meeting",
    "msg_edit",
    "msg_edit_history",
    "msg_get",
    "msg_list",
    "msg_post",
    "msg_react",
    "msg_search",
    "msg_unreact",
    "msg_wait",
    "template_create",
    "template_get",
    "template_list",
    "thread_archive",
    "thread_close",
    "thread_create",
    "thread_delete",
    "thread_get",
    "thread_list",
    "thread_set_state",
    "thread_settings_get",
    "thread_settings_update",
    "thread_wait_state_get",
  ]);
  // Every array in the schemas has `items` (some clients reject schemas without it).
  const { tools } = await clients.a.client.listTools();
  const arrays: unknown[] = [];
  const visit = (node: unknown) => {
    if (node === null || typeof node !== "object") return;
    if ((node as { type?: unknown }).type === "array") arrays.push(node);
    Object.values(node).forEach(visit);
  };
  tools.forEach((tool) => visit(tool.inputSchema));
  assert.ok(arrays.length > 0);
  for (const array of arrays) assert.ok("items" in (array as object), JSON.stringify(array));
});

Deno.test("bus_connect creates a thread by name, a second agent joins it, and ids and templates are checked", async () => {
  await using clients = await twoClients({ processes: true });
  const alice = await connectAgent(clients.a, "design", {
    system_prompt: "Only talk about the API.",
  });
  const created = alice.result.thread as Record<string, unknown>;
  assert.equal(created.created, true);
  assert.equal((alice.result.agent as { is_administrator: boolean }).is_administrator, true);
  const history = alice.result.messages as { seq: number; role: string; content: string }[];
  assert.equal(history.length, 1, "a new thread holds only its system prompt");
  assert.equal(history[0]!.seq, 0);
  assert.match(history[0]!.content, /several agents[\s\S]*Only talk about the API\./);
  assert.equal(alice.seq, 0);
  assert.equal(typeof alice.replyToken, "string");

  const bob = await connectAgent(clients.b, "design", {
    system_prompt: "ignored",
    template: "brainstorm",
  });
  const joined = bob.result.thread as Record<string, unknown>;
  assert.equal(joined.created, false);
  assert.equal(joined.thread_id, alice.threadId);
  assert.deepEqual(joined.administrator, {
    agent_id: alice.agentId,
    name: (alice.result.agent as { display_name: string }).display_name,
  });
  assert.equal((bob.result.agent as { is_administrator: boolean }).is_administrator, false);
  assert.match((bob.result.agent as { role_assignment: string }).role_assignment, /PARTICIPANT/);
  const prompt = (bob.result.messages as { content: string }[])[0]!.content;
  assert.match(prompt, /Only talk about the API\./, "joining keeps the creator's prompt");

  const byId = await clients.b.ok("bus_connect", {
    thread_id: alice.threadId,
    agent_id: bob.agentId,
    token: bob.token,
  });
  assert.equal((byId.agent as { agent_id: string }).agent_id, bob.agentId, "resume keeps the id");
  const agentsBefore = (await clients.a.ok("agent_list")).agents as unknown[];
  const unknown = await clients.b.fail("bus_connect", { thread_id: "nope" });
  assert.equal(unknown.code, "THREAD_NOT_FOUND");
  assert.equal(
    ((await clients.a.ok("agent_list")).agents as unknown[]).length,
    agentsBefore.length,
  );
  assert.equal(
    (await clients.b.fail("bus_connect", { thread_name: "other", template: "nope" })).code,
    "TEMPLATE_NOT_FOUND",
  );
  assert.equal((await clients.a.ok("thread_list")).total, 1, "nothing was created by the failures");
  assert.equal(
    (await clients.b.fail("bus_connect", { thread_name: "x", agent_id: bob.agentId, token: "bad" }))
      .code,
    "AUTHENTICATION_REQUIRED",
  );
  assert.equal((await clients.b.fail("bus_connect", {})).code, "INVALID_ARGUMENT");

  // An archived thread is rejoined by name, not duplicated.
  await clients.a.ok("thread_archive", { thread_id: alice.threadId });
  const again = await connectAgent(clients.b, "design");
  assert.equal((again.result.thread as { created: boolean }).created, false);
  assert.equal(again.threadId, alice.threadId);
});

Deno.test("msg_post: strict sync fields, chained tokens, replay, foreign tokens and stale seqs", async () => {
  await using clients = await twoClients({ processes: true });
  const alice = await connectAgent(clients.a, "sync");
  const bob = await connectAgent(clients.b, "sync");
  const base = { thread_id: alice.threadId, author: alice.agentId, content: "hi" };

  const missing = await clients.a.fail("msg_post", base);
  assert.equal(missing.code, "MissingSyncFieldsError");
  assert.equal(missing.structured.action, "CALL_MSG_WAIT");
  assert.equal(
    JSON.parse(missing.text).error,
    "MissingSyncFieldsError",
    "the text is AgentChatBus's JSON",
  );
  const alice2 = await connectAgent(clients.a, "sync", {
    agent_id: alice.agentId,
    token: alice.token,
  });

  const first = await post(alice2, "first");
  assert.equal(first.seq, 1);
  assert.equal(typeof first.reply_token, "string", "a registered author gets a chain token");
  const second = await post(alice2, "second, with the chained token");
  assert.equal(second.seq, 2);

  const replay = await clients.a.fail("msg_post", {
    ...base,
    expected_last_seq: 2,
    reply_token: first.reply_token,
  });
  assert.equal(replay.code, "ReplyTokenReplayError");
  assert.equal(replay.structured.new_messages_1st_read, undefined, "a replay reports no messages");

  // Bob's token, used by Alice: invalid, and Bob's token still works afterwards.
  const bobToken = bob.replyToken;
  const foreign = await clients.a.fail("msg_post", {
    ...base,
    expected_last_seq: 2,
    reply_token: bobToken,
  });
  assert.equal(foreign.code, "ReplyTokenInvalidError");
  const stale = await clients.b.fail("msg_post", {
    thread_id: bob.threadId,
    author: bob.agentId,
    content: "I missed two messages",
    expected_last_seq: bob.seq,
    reply_token: bobToken,
  });
  assert.equal(
    stale.code,
    "SeqMismatchError",
    "the token was not burned: the seq check is reached",
  );
  assert.equal(stale.structured.action, "READ_MESSAGES_THEN_CALL_MSG_WAIT");
  assert.deepEqual(
    (stale.structured.new_messages_1st_read as { seq: number; content: string }[]).map((
      m,
    ) => [m.seq, m.content]),
    [[1, "first"], [2, "second, with the chained token"]],
  );
  assert.equal(stale.structured.current_seq, 2);

  // After the error Bob's next msg_wait returns at once (nothing newer than what he just read).
  const started = performance.now();
  const recovered = await wait(bob, { afterSeq: 2, timeoutMs: 20_000 });
  assert.ok(performance.now() - started < 10_000, "fast return");
  assert.deepEqual(recovered.messages, []);
  assert.equal(recovered.sync.current_seq, 2);
  await post(bob, "now in order");

  // A token of another thread is invalid.
  const other = await connectAgent(clients.a, "elsewhere", {
    agent_id: alice.agentId,
    token: alice.token,
  });
  const crossThread = await clients.a.fail("msg_post", {
    ...base,
    expected_last_seq: 3,
    reply_token: other.replyToken,
  });
  assert.equal(crossThread.code, "ReplyTokenInvalidError");
});

Deno.test("two agents holding the same seq: the first post wins, the second recovers through msg_wait", async () => {
  await using clients = await twoClients({ processes: true });
  const alice = await connectAgent(clients.a, "race");
  const bob = await connectAgent(clients.b, "race");
  const carolClient = clients.b;
  const carol = await connectAgent(carolClient, "race");
  await post(alice, "M1 from alice");
  await wait(bob, { afterSeq: 0 });
  await wait(carol, { afterSeq: 0 });
  assert.equal(bob.seq, 1);
  assert.equal(carol.seq, 1);
  const results = await Promise.all([
    clients.b.call("msg_post", {
      thread_id: bob.threadId,
      author: bob.agentId,
      content: "bob's answer",
      expected_last_seq: bob.seq,
      reply_token: bob.replyToken,
    }),
    carolClient.call("msg_post", {
      thread_id: carol.threadId,
      author: carol.agentId,
      content: "carol's answer",
      expected_last_seq: carol.seq,
      reply_token: carol.replyToken,
    }),
  ]);
  const outcomes = results.map((r) =>
    r.isError ? (r.structuredContent as { error: { code: string } }).error.code : "ok"
  );
  assert.deepEqual(outcomes.sort(), ["SeqMismatchError", "ok"]);
  const loser = results[0]!.isError ? bob : carol;
  const caughtUp = await wait(loser, { afterSeq: 1 });
  assert.equal(caughtUp.messages.length, 1, "the loser reads the winner's post");
  await post(loser, "answer after reading the other one");
  // A third stale post (alice never read) also recovers.
  const aliceStale = await clients.a.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "late",
    expected_last_seq: alice.seq,
    reply_token: alice.replyToken,
  });
  assert.equal(aliceStale.code, "SeqMismatchError");
  assert.equal((aliceStale.structured.new_messages_1st_read as unknown[]).length, 2);
  const read = await wait(alice, { afterSeq: 1 });
  assert.equal(read.messages.length, 2);
  const last = await post(alice, "late, now informed");
  assert.equal(last.seq, 4);
});

Deno.test("msg_wait: returns what is there, blocks when caught up or alone, reuses its token on timeouts", async () => {
  await using clients = await twoClients({ processes: true });
  const alice = await connectAgent(clients.a, "waits");
  // A lone agent in an empty thread waits (no fast return) and gets the same token each timeout.
  const lone1 = await wait(alice, { timeoutMs: 300 });
  assert.deepEqual(lone1.messages, []);
  const lone2 = await wait(alice, { timeoutMs: 300 });
  assert.equal(lone2.sync.reply_token, lone1.sync.reply_token, "repeated timeouts reuse the token");
  assert.equal(lone1.sync.reply_token, alice.replyToken);

  const bob = await connectAgent(clients.b, "waits");
  await post(bob, "hello");
  const ready = await wait(alice, { afterSeq: 0, timeoutMs: 30_000 });
  assert.deepEqual(ready.messages.map((m) => [m.seq, m.content]), [[1, "hello"]]);
  assert.match(
    ready.messages[0]!.header,
    /^\[1\] Test \S+ \(user\) \d{4}-\d\d-\d\dT[\d:.]+\+00:00$/,
  );

  // While Alice waits she shows in thread_wait_state_get; a post wakes her.
  const parked = wait(alice, { timeoutMs: 30_000 });
  let waiting: { agent_id: string }[] = [];
  for (let i = 0; i < 200 && waiting.length === 0; i++) {
    waiting = (await clients.b.ok("thread_wait_state_get", { thread_id: alice.threadId }))
      .agents_waiting as { agent_id: string }[];
    if (waiting.length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  assert.deepEqual(waiting.map((w) => w.agent_id), [alice.agentId]);
  await post(bob, "wake up");
  const woken = await parked;
  assert.deepEqual(woken.messages.map((m) => m.content), ["wake up"]);
  assert.equal(
    (await clients.b.ok("thread_wait_state_get", { thread_id: alice.threadId })).count,
    0,
    "the wait state is cleared",
  );

  // json format: one JSON document with the sync context and +00:00 timestamps.
  const json = await clients.a.call("msg_wait", {
    thread_id: alice.threadId,
    after_seq: 0,
    return_format: "json",
    agent_id: alice.agentId,
    token: alice.token,
  });
  const doc = JSON.parse(textOf(json)) as {
    messages: { created_at: string; seq: number }[];
    current_seq: number;
  };
  assert.deepEqual(doc.messages.map((m) => m.seq), [1, 2]);
  assert.match(doc.messages[0]!.created_at, /\+00:00$/);
  assert.equal(doc.current_seq, 2);

  // Partial credentials are refused.
  const partial = await clients.a.fail("msg_wait", {
    thread_id: alice.threadId,
    after_seq: 0,
    agent_id: alice.agentId,
  });
  assert.equal(partial.code, "InvalidCredentials");
  const wrong = await clients.a.fail("msg_wait", {
    thread_id: alice.threadId,
    after_seq: 0,
    agent_id: alice.agentId,
    token: "wrong",
  });
  assert.equal(wrong.code, "InvalidCredentials");
});

Deno.test("msg_wait for_agent returns only messages handed off to that agent", async () => {
  await using clients = await twoClients();
  const alice = await connectAgent(clients.a, "handoff");
  const bob = await connectAgent(clients.b, "handoff");
  await post(alice, "for everyone");
  await post(alice, "for bob", { metadata: { handoff_target: bob.agentId } });
  const got = await wait(bob, { afterSeq: 0, extra: { for_agent: bob.agentId } });
  assert.deepEqual(got.messages.map((m) => m.content), ["for bob"]);
  const none = await wait(bob, {
    afterSeq: 0,
    timeoutMs: 200,
    extra: { for_agent: "someone-else" },
  });
  assert.deepEqual(none.messages, []);
});

Deno.test("anonymous authors post with unbound tokens; a registered agent cannot borrow one", async () => {
  await using clients = await twoClients({ processes: true });
  const alice = await connectAgent(clients.a, "anon");
  const raw = await clients.b.call("msg_wait", {
    thread_id: alice.threadId,
    after_seq: 0,
    timeout_ms: 0,
  });
  const unbound = unpackBlocks(raw).sync;
  const posted = await clients.b.ok("msg_post", {
    thread_id: alice.threadId,
    author: "deploy-script",
    content: "build 42 is green",
    expected_last_seq: unbound.current_seq,
    reply_token: unbound.reply_token,
  });
  assert.equal(posted.seq, 1);
  assert.equal(posted.reply_token, undefined, "no chain token for an anonymous author");
  const raw2 = await clients.b.call("msg_wait", {
    thread_id: alice.threadId,
    after_seq: 1,
    timeout_ms: 0,
  });
  const borrowed = await clients.b.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "pretending to be alice",
    expected_last_seq: 1,
    reply_token: unpackBlocks(raw2).sync.reply_token,
  });
  assert.equal(borrowed.code, "ReplyTokenInvalidError");
});

Deno.test("messages: closed threads, reply_to, priority, stop_reason, mentions, msg_get", async () => {
  await using clients = await twoClients();
  const alice = await connectAgent(clients.a, "msgs");
  const first = await post(alice, "root", { priority: "urgent", mentions: ["bob"] });
  const reply = await post(alice, "child", {
    reply_to_msg_id: first.msg_id,
    metadata: { stop_reason: "complete" },
  });
  assert.equal(reply.reply_to_msg_id, first.msg_id);
  assert.equal(reply.stop_reason, "complete");
  const got = await clients.b.ok("msg_get", { message_id: first.msg_id });
  const message = got.message as Record<string, unknown>;
  assert.equal(got.found, true);
  assert.equal(message.priority, "urgent");
  assert.deepEqual((message.metadata as { mentions: string[] }).mentions, ["bob"]);
  assert.deepEqual(await clients.b.ok("msg_get", { message_id: "nope" }), {
    found: false,
    message: null,
  });

  const call = (extra: Record<string, unknown>) =>
    clients.a.fail("msg_post", {
      thread_id: alice.threadId,
      author: alice.agentId,
      content: "x",
      expected_last_seq: alice.seq,
      reply_token: alice.replyToken,
      ...extra,
    });
  assert.equal((await call({ priority: "critical" })).code, "INVALID_ARGUMENT");
  assert.equal((await call({ metadata: { stop_reason: "bored" } })).code, "INVALID_ARGUMENT");
  assert.equal((await call({ reply_to_msg_id: "missing" })).code, "INVALID_ARGUMENT");
  assert.equal((await call({ content: "" })).code, "INVALID_ARGUMENT");
  const other = await connectAgent(clients.b, "elsewhere");
  const foreignReply = await post(other, "in another thread");
  assert.equal((await call({ reply_to_msg_id: foreignReply.msg_id })).code, "INVALID_ARGUMENT");

  const urgent = await clients.b.call("msg_list", {
    thread_id: alice.threadId,
    priority: "urgent",
    return_format: "json",
  });
  assert.deepEqual((JSON.parse(textOf(urgent)) as { content: string }[]).map((m) => m.content), [
    "root",
  ]);

  await clients.b.ok("thread_close", { thread_id: alice.threadId, summary: "done" });
  const closed = await call({});
  assert.equal(closed.code, "THREAD_CLOSED");
  assert.equal((await clients.b.ok("thread_get", { thread_id: alice.threadId })).summary, "done");
});

Deno.test("images round-trip as image blocks; data URLs, include_attachments=false and the size bound", async () => {
  await using clients = await twoClients({ env: { AGENT_BUS_MAX_ATTACHMENT_BYTES: "1024" } });
  const alice = await connectAgent(clients.a, "pics");
  const png = btoa(String.fromCharCode(...new Uint8Array(64).map((_, i) => i)));
  await post(alice, "a diagram", {
    metadata: {
      attachments: [
        { type: "image", mimeType: "image/png", data: png },
        { type: "image", data: `data:image/jpeg;base64,${png}` },
      ],
    },
  });
  const listed = unpackBlocks({
    content: [
      { type: "text", text: "{}" },
      ...((await clients.b.call("msg_list", { thread_id: alice.threadId, after_seq: 0 }))
        .content as never[]),
    ],
  });
  assert.equal(listed.messages[0]!.seq, 0, "the system prompt comes first");
  assert.deepEqual(listed.messages[1]!.images, [
    { data: png, mimeType: "image/png" },
    { data: png, mimeType: "image/jpeg" },
  ]);
  const bob = await connectAgent(clients.b, "pics");
  const waited = await wait(bob, { afterSeq: 0 });
  assert.equal(waited.messages[0]!.images.length, 2);
  const textOnly = await clients.b.call("msg_list", {
    thread_id: alice.threadId,
    after_seq: 0,
    include_attachments: false,
  });
  assert.ok((textOnly.content as { type: string }[]).every((b) => b.type === "text"));
  const asJson = await clients.b.call("msg_list", {
    thread_id: alice.threadId,
    return_format: "json",
  });
  const messageId = (JSON.parse(textOf(asJson)) as { msg_id: string }[])[1]!.msg_id;
  const stored = (await clients.b.ok("msg_get", { message_id: messageId })).message as {
    metadata: { attachments: unknown[] };
  };
  assert.deepEqual(stored.metadata.attachments, [
    { type: "image", mimeType: "image/png", bytes: 64 },
    { type: "image", mimeType: "image/jpeg", bytes: 64 },
  ], "metadata keeps stubs, not the data");

  const big = btoa("x".repeat(1500));
  const tooBig = await clients.a.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "too large",
    expected_last_seq: alice.seq,
    reply_token: alice.replyToken,
    metadata: { attachments: [{ type: "image", mimeType: "image/png", data: big }] },
  });
  assert.equal(tooBig.code, "INVALID_ARGUMENT");
  assert.match(tooBig.message, /largest attachment is 1024 bytes/);
  const notBase64 = await clients.a.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "bad",
    expected_last_seq: alice.seq,
    reply_token: alice.replyToken,
    metadata: { attachments: [{ type: "image", mimeType: "image/png", data: "!!!!" }] },
  });
  assert.equal(notBase64.code, "INVALID_ARGUMENT");
});

Deno.test("edits: author only, history oldest first, no_change; reactions are idempotent", async () => {
  await using clients = await twoClients();
  const alice = await connectAgent(clients.a, "edits");
  const bob = await connectAgent(clients.b, "edits");
  const posted = await post(alice, "v1");
  const id = posted.msg_id as string;
  // The connection bus_connect authenticated may omit credentials.
  const edited = await clients.a.ok("msg_edit", { message_id: id, new_content: "v2" });
  assert.equal(edited.version, 1);
  await clients.a.ok("msg_edit", { message_id: id, new_content: "v3" });
  assert.deepEqual(await clients.a.ok("msg_edit", { message_id: id, new_content: "v3" }), {
    no_change: true,
    version: 2,
  });
  const history = await clients.b.ok("msg_edit_history", { message_id: id });
  assert.equal(history.current_content, "v3");
  assert.deepEqual(
    (history.edits as { version: number; old_content: string }[]).map((
      e,
    ) => [e.version, e.old_content]),
    [
      [1, "v1"],
      [2, "v2"],
    ],
  );
  const byBob = await clients.b.fail("msg_edit", { message_id: id, new_content: "hijack" });
  assert.equal(byBob.code, "PermissionError");
  const anonymous = await connectInProcess(clients.dbPath, "chatbus");
  await using _ = anonymous;
  assert.equal(
    (await anonymous.fail("msg_edit", { message_id: id, new_content: "x" })).code,
    "AUTHENTICATION_REQUIRED",
  );
  const got = (await clients.b.ok("msg_get", { message_id: id })).message as Record<
    string,
    unknown
  >;
  assert.equal(got.edit_version, 2);
  assert.equal(typeof got.edited_at, "string");
  const search = await clients.b.ok("msg_search", { query: "v3" });
  assert.deepEqual(
    (search.results as { message_id: string }[]).map((r) => r.message_id),
    [id],
    "edits are searchable",
  );

  const reacted = await clients.b.ok("msg_react", { message_id: id, reaction: "👍" });
  assert.equal(reacted.agent_id, bob.agentId, "the connection's agent reacts");
  assert.equal(reacted.added, true);
  const again = await clients.b.ok("msg_react", { message_id: id, reaction: "👍" });
  assert.equal(again.added, false);
  assert.equal(again.created_at, reacted.created_at);
  const withReaction = (await clients.a.ok("msg_get", { message_id: id })).message as {
    reactions: unknown[];
  };
  assert.equal(withReaction.reactions.length, 1);
  assert.equal(
    (await clients.b.ok("msg_unreact", { message_id: id, reaction: "👍" })).removed,
    true,
  );
  assert.equal(
    (await clients.b.ok("msg_unreact", { message_id: id, reaction: "👍" })).removed,
    false,
  );
  assert.equal(
    (await clients.b.fail("msg_react", { message_id: "nope", reaction: "x" })).code,
    "MESSAGE_NOT_FOUND",
  );
});

Deno.test("threads: list pages newest first, states, archive, close_meeting, delete cascades", async () => {
  await using clients = await twoClients();
  const admin = await connectAgent(clients.a, "t0");
  const names = ["t1", "t2", "t3", "t4"];
  for (const name of names) {
    await connectAgent(clients.a, name, { agent_id: admin.agentId, token: admin.token });
  }
  const page1 = await clients.b.ok("thread_list", { limit: 2 });
  assert.deepEqual((page1.threads as { topic: string }[]).map((t) => t.topic), ["t4", "t3"]);
  assert.equal(page1.has_more, true);
  const page2 = await clients.b.ok("thread_list", { limit: 2, before: page1.next_cursor });
  assert.deepEqual((page2.threads as { topic: string }[]).map((t) => t.topic), ["t2", "t1"]);
  const page3 = await clients.b.ok("thread_list", { limit: 2, before: page2.next_cursor });
  assert.deepEqual((page3.threads as { topic: string }[]).map((t) => t.topic), ["t0"]);
  assert.equal(page3.has_more, false);

  const t = (await clients.b.ok("thread_get", { thread_id: admin.threadId })) as Record<
    string,
    string
  >;
  assert.equal(t.created_at, t.updated_at);
  await new Promise((r) => setTimeout(r, 5));
  await post(admin, "a post moves updated_at");
  const posted = (await clients.b.ok("thread_get", { thread_id: admin.threadId })) as Record<
    string,
    string
  >;
  assert.ok(posted.updated_at! > t.updated_at!, `${posted.updated_at} > ${t.updated_at}`);
  await clients.b.ok("thread_set_state", { thread_id: admin.threadId, state: "implement" });
  const moved = (await clients.b.ok("thread_get", { thread_id: admin.threadId })) as Record<
    string,
    string
  >;
  assert.equal(moved.status, "implement");
  assert.notEqual(moved.updated_at, moved.created_at);
  assert.equal(
    (await clients.b.fail("thread_set_state", { thread_id: admin.threadId, state: "closed" })).code,
    "INVALID_ARGUMENT",
  );
  await clients.b.ok("thread_archive", { thread_id: admin.threadId });
  assert.equal(
    (await clients.b.ok("thread_list")).total,
    4,
    "archived threads are hidden by default",
  );
  assert.equal((await clients.b.ok("thread_list", { include_archived: true })).total, 5);
  assert.equal((await clients.b.ok("thread_list", { status: "archived" })).total, 1);

  // close_meeting: the admin only.
  const other = await connectAgent(clients.b, "t4");
  const forbidden = await clients.b.fail("close_meeting", {
    thread_id: other.threadId,
    agent_id: other.agentId,
    token: other.token,
  });
  assert.equal(forbidden.code, "FORBIDDEN");
  assert.equal(
    (await clients.b.fail("close_meeting", {
      thread_id: other.threadId,
      agent_id: other.agentId,
      token: "x",
    })).code,
    "AUTHENTICATION_REQUIRED",
  );
  const closed = await clients.a.ok("close_meeting", {
    thread_id: other.threadId,
    agent_id: admin.agentId,
    token: admin.token,
    summary: "shipped",
  });
  assert.equal(closed.status, "closed");
  const reopened = await clients.a.ok("thread_set_state", {
    thread_id: other.threadId,
    state: "discuss",
  });
  assert.equal(reopened.status, "discuss", "any state may follow closed");

  // A wait in a thread that is deleted ends with THREAD_NOT_FOUND.
  const gone = await connectAgent(clients.b, "t2");
  const parked = clients.b.call("msg_wait", {
    thread_id: gone.threadId,
    after_seq: gone.seq,
    timeout_ms: 30_000,
    agent_id: gone.agentId,
    token: gone.token,
  });
  for (let i = 0; i < 500; i++) {
    if ((await clients.a.ok("thread_wait_state_get", { thread_id: gone.threadId })).count === 1) {
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await clients.a.ok("thread_delete", { thread_id: gone.threadId, confirm: true });
  const ended = await parked;
  assert.equal(
    (ended.structuredContent as { error: { code: string } }).error.code,
    "THREAD_NOT_FOUND",
  );

  // Delete: confirm required, everything goes.
  const doomed = await connectAgent(clients.a, "t1", {
    agent_id: admin.agentId,
    token: admin.token,
  });
  const msg = await post(doomed, "bye");
  await clients.a.ok("msg_react", { message_id: msg.msg_id, reaction: "x" });
  assert.equal(
    (await clients.a.fail("thread_delete", { thread_id: doomed.threadId, confirm: false })).code,
    "INVALID_ARGUMENT",
  );
  await clients.a.ok("thread_delete", { thread_id: doomed.threadId, confirm: true });
  assert.equal(
    (await clients.a.fail("thread_get", { thread_id: doomed.threadId })).code,
    "THREAD_NOT_FOUND",
  );
  assert.deepEqual(await clients.a.ok("msg_get", { message_id: msg.msg_id }), {
    found: false,
    message: null,
  });
  assert.equal(
    (await clients.a.fail("thread_delete", { thread_id: doomed.threadId, confirm: true })).code,
    "THREAD_NOT_FOUND",
  );
});

Deno.test("templates: four built-ins, custom ones, defaults the caller overrides", async () => {
  await using clients = await twoClients();
  const templates = (await clients.a.ok("template_list")).templates as {
    id: string;
    name: string;
    is_builtin: boolean;
  }[];
  assert.deepEqual(templates.map((t) => [t.id, t.name]), [
    ["code-review", "Code Review"],
    ["security-audit", "Security Audit"],
    ["architecture", "Architecture Discussion"],
    ["brainstorm", "Brainstorm"],
  ]);
  assert.equal(
    (await clients.a.fail("template_create", { id: "brainstorm", name: "Mine" })).code,
    "INVALID_ARGUMENT",
  );
  await clients.a.ok("template_create", {
    id: "retro",
    name: "Retro",
    system_prompt: "What went well?",
    default_metadata: { kind: "retro", team: "core" },
  });
  assert.equal(
    (await clients.a.ok("template_get", { template_id: "retro" })).system_prompt,
    "What went well?",
  );
  assert.equal(
    (await clients.a.fail("template_get", { template_id: "nope" })).code,
    "TEMPLATE_NOT_FOUND",
  );
  const { agent_id, token } = await clients.a.ok("agent_register", { ide: "Test", model: "m" }) as {
    agent_id: string;
    token: string;
  };
  const withDefaults = await clients.a.ok("thread_create", {
    topic: "r1",
    agent_id,
    token,
    template: "retro",
  });
  assert.equal(withDefaults.system_prompt, "What went well?");
  assert.equal(withDefaults.template_id, "retro");
  assert.equal(withDefaults.current_seq, 0);
  const overridden = await clients.a.ok("thread_create", {
    topic: "r2",
    agent_id,
    token,
    template: "retro",
    system_prompt: "Mine wins",
    metadata: { team: "web" },
  });
  assert.equal(overridden.system_prompt, "Mine wins");
  const thread = await clients.a.ok("thread_get", { thread_id: overridden.thread_id });
  assert.deepEqual(thread.metadata, { kind: "retro", team: "web" });
  assert.equal(
    (await clients.a.fail("thread_create", { topic: "r3", agent_id, token: "bad" })).code,
    "AUTHENTICATION_REQUIRED",
  );
});

Deno.test("agents: register, list without tokens, heartbeat, update, resume, unregister", async () => {
  await using clients = await twoClients();
  const one = await clients.a.ok("agent_register", {
    ide: "Cursor",
    model: "Claude",
    emoji: "🦀",
    capabilities: ["review"],
  });
  const two = await clients.a.ok("agent_register", {
    ide: "Cursor",
    model: "Claude",
    emoji: "not an emoji",
  });
  const blank = await clients.a.ok("agent_register", { ide: " ", model: "" });
  assert.equal(one.name, "Cursor (Claude)");
  assert.equal(two.name, "Cursor (Claude) 2");
  assert.equal(one.emoji, "🦀");
  assert.notEqual(two.emoji, "not an emoji");
  assert.notEqual(two.emoji, one.emoji);
  assert.equal(blank.ide, "CLI");
  assert.equal(blank.model, "unknown");
  const listed = await clients.b.call("agent_list", {});
  assert.ok(!textOf(listed).includes(one.token as string), "tokens are never listed");
  const agents =
    (listed.structuredContent as { agents: { agent_id: string; is_online: boolean }[] }).agents;
  assert.equal(agents.length, 3);
  assert.ok(agents.every((a) => a.is_online));

  const id = one.agent_id as string;
  const token = one.token as string;
  assert.deepEqual(await clients.b.ok("agent_heartbeat", { agent_id: id, token }), { ok: true });
  assert.deepEqual(await clients.b.ok("agent_heartbeat", { agent_id: id, token: "bad" }), {
    ok: false,
  });
  const updated = await clients.b.ok("agent_update", { agent_id: id, token, display_name: "Crab" });
  assert.equal(updated.display_name, "Crab");
  assert.equal(updated.alias_source, "user");
  assert.deepEqual(updated.capabilities, ["review"], "fields not given are kept");
  const cleared = await clients.b.ok("agent_update", { agent_id: id, token, display_name: "" });
  assert.equal(cleared.alias_source, "auto");
  assert.deepEqual(await clients.b.ok("agent_update", { agent_id: id, token: "bad" }), {
    ok: false,
  });
  assert.equal((await clients.b.ok("agent_resume", { agent_id: id, token })).agent_id, id);
  assert.equal(
    (await clients.b.fail("agent_resume", { agent_id: id, token: "bad" })).code,
    "AUTHENTICATION_REQUIRED",
  );
  assert.deepEqual(await clients.b.ok("agent_unregister", { agent_id: id, token: "bad" }), {
    ok: false,
  });
  assert.deepEqual(await clients.b.ok("agent_unregister", { agent_id: id, token }), { ok: true });
  assert.equal(((await clients.b.ok("agent_list")).agents as unknown[]).length, 2);
  const config = await clients.a.ok("bus_get_config");
  assert.equal(config.preferred_language, "English");
  assert.equal(config.endpoint, "stdio", "no made-up URL where there is none");
  assert.equal(config.transport, "stdio");
});

Deno.test("bad arguments to every chatbus tool come back as structured INVALID_ARGUMENT errors", async () => {
  await using clients = await twoClients();
  const { tools } = await clients.a.client.listTools();
  for (const tool of tools) {
    const schema = tool.inputSchema as { required?: string[]; properties?: object };
    const keys = schema.required?.length
      ? schema.required
      : Object.keys(schema.properties ?? {}).slice(0, 1);
    if (keys.length === 0) continue; // takes no arguments
    const garbage = Object.fromEntries(
      keys.map((key) => [key, { nested: ["not", "a", "string"] }]),
    );
    const result = await clients.a.call(tool.name, garbage);
    assert.equal(result.isError, true, tool.name);
    const error = (result.structuredContent as { error: { code: string } }).error;
    assert.equal(error.code, "INVALID_ARGUMENT", `${tool.name}: ${textOf(result)}`);
  }
});

Deno.test("resources (config, agents, threads, transcript, state, summary) and prompts", async () => {
  await using clients = await twoClients();
  const alice = await connectAgent(clients.a, "res");
  await post(alice, "first line");
  await post(alice, "second line");
  const client = clients.b.client;
  const listed = (await client.listResources()).resources.map((r) => r.uri);
  assert.deepEqual(listed, ["chat://bus/config", "chat://agents/active", "chat://threads/active"]);
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) =>
    t.uriTemplate
  );
  assert.equal(templates.length, 3);
  const read = async (uri: string) =>
    ((await client.readResource({ uri })).contents[0] as { text: string }).text;
  assert.equal(JSON.parse(await read("chat://bus/config")).preferred_language, "English");
  const agents = JSON.parse(await read("chat://agents/active")) as {
    agent_id: string;
    token?: string;
  }[];
  assert.deepEqual(agents.map((a) => a.agent_id), [alice.agentId]);
  assert.equal(agents[0]!.token, undefined);
  assert.deepEqual(
    (JSON.parse(await read("chat://threads/active")) as { thread_id: string }[]).map((t) =>
      t.thread_id
    ),
    [alice.threadId],
  );
  assert.match(
    await read(`chat://threads/${alice.threadId}/transcript`),
    /^\[1\] .*\(user\): first line\n\[2\] .*: second line$/,
  );
  const state = JSON.parse(await read(`chat://threads/${alice.threadId}/state`));
  assert.equal(state.latest_seq, 2);
  assert.equal(state.status, "discuss");
  await clients.a.ok("thread_close", { thread_id: alice.threadId, summary: "All done." });
  assert.equal(await read(`chat://threads/${alice.threadId}/summary`), "All done.");
  await assert.rejects(client.readResource({ uri: "chat://threads/nope/state" }), /not found/);
  await assert.rejects(client.readResource({ uri: "chat://nothing" }), /Unknown resource/);

  const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  assert.deepEqual(prompts, ["summarize_thread", "handoff_to_agent"]);
  const summary = await client.getPrompt({
    name: "summarize_thread",
    arguments: { topic: "res", transcript: "[1] a: hello" },
  });
  assert.match(
    (summary.messages[0]!.content as { text: string }).text,
    /decisions[\s\S]*\[1\] a: hello/,
  );
  const handoff = await client.getPrompt({
    name: "handoff_to_agent",
    arguments: { from_agent: "a", to_agent: "b", task_description: "write the tests" },
  });
  assert.match(
    (handoff.messages[0]!.content as { text: string }).text,
    /^a hands this task to b:\n\nwrite the tests/,
  );
  await assert.rejects(
    client.getPrompt({ name: "handoff_to_agent", arguments: { from_agent: "a" } }),
    /to_agent/,
  );
});

Deno.test("bus_connect's history: after_seq filters it, and a long one shows the newest that fit so the first post succeeds", async () => {
  await using clients = await twoClients();
  const alice = await connectAgent(clients.a, "history");
  for (let i = 1; i <= 120; i++) await post(alice, `message ${i}: ${"words ".repeat(20)}`);
  const late = await connectAgent(clients.b, "history", { after_seq: 115 });
  const seqs = (late.result.messages as { seq: number }[]).map((m) => m.seq);
  assert.deepEqual(seqs, [116, 117, 118, 119, 120], "after_seq filters (no seq-0 prompt after 0)");
  assert.equal(late.seq, 120);
  assert.equal(late.result.skipped_messages, undefined);
  const early = await connectAgent(clients.b, "history");
  const shown = (early.result.messages as { seq: number }[]).map((m) => m.seq);
  assert.equal(shown.at(-1), 120, "the newest messages are shown");
  assert.ok(shown.length < 120, "not all of them fit");
  const skipped = early.result.skipped_messages as Record<string, unknown>;
  assert.deepEqual(skipped, {
    count: shown[0]! - 1,
    from_seq: 1,
    through_seq: shown[0]! - 1,
    page_with: `msg_list(thread_id="${early.threadId}", after_seq=0, limit=100)`,
  });
  assert.equal(early.seq, 120, "current_seq is the latest");
  await post(early, "I read the newest and know what I skipped");
});

Deno.test("thread_list keeps a page within the result budget and pages on from there", async () => {
  await using clients = await twoClients({ env: { AGENT_BUS_TOOL_RESULT_MAX_BYTES: "2000" } });
  const { agent_id, token } = await clients.a.ok("agent_register", { ide: "Test", model: "m" }) as {
    agent_id: string;
    token: string;
  };
  for (let i = 0; i < 12; i++) {
    await clients.a.ok("thread_create", {
      topic: `t${i}`,
      agent_id,
      token,
      system_prompt: "p".repeat(300),
    });
    await new Promise((r) => setTimeout(r, 2)); // distinct creation times for the cursor
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 12; page++) {
    const listed = await clients.b.ok("thread_list", cursor ? { before: cursor } : {});
    const topics = (listed.threads as { topic: string }[]).map((t) => t.topic);
    assert.ok(topics.length < 12, "the budget cut the page");
    seen.push(...topics);
    if (!listed.has_more) break;
    cursor = listed.next_cursor as string;
  }
  assert.deepEqual(seen, Array.from({ length: 12 }, (_, i) => `t${11 - i}`));
});
