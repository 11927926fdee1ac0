/**
 * One tool result stays small enough for the clients that read it. Both
 * Claude Code and Codex hand their model the `structuredContent` JSON;
 * Codex cuts a tool output past about 12,000 bytes out of its middle, Claude
 * Code swaps one of 50,000 characters for a file path (measured with
 * scripts/measure_clients.ts). A `sync` of many large messages returns as
 * many as fit, says `has_more`, moves the cursor only past what it
 * returned, and cuts no body in either form. Every tool of every profile
 * stays within the budget over oversized rows (metadata, profiles,
 * templates, edits, reactions, questions, mail), and images within one
 * attachment's size.
 */

import assert from "node:assert/strict";
import { connectAgent, post } from "../_helpers/chat.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { execSql } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Codex 0.169.0 keeps a tool output whole up to about this many bytes. */
const CODEX_WHOLE_BYTES = 12_000;

const bytes = (text: string) => new TextEncoder().encode(text).length;

type Structured = Record<string, unknown> & {
  received: { seq: number; content_markdown: string }[];
  has_more: boolean;
  cursor: { last_seq: number };
};

Deno.test("sync returns 10 messages of 3,000 characters over several calls, none cut", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using writer = await connectInProcess(path, "peer");
  await using reader = await connectInProcess(path, "peer");
  const created = await writer.client.callTool({
    name: "topic_create",
    arguments: { name: "big" },
  });
  const topicId = (created.structuredContent as { topic_id: string }).topic_id;
  for (const [server, name] of [[writer, "writer"], [reader, "reader"]] as const) {
    await server.client.callTool({
      name: "topic_join",
      arguments: { topic_id: topicId, agent_name: name },
    });
  }
  const bodies = Array.from(
    { length: 10 },
    // Multi-byte text with quotes and newlines, which JSON escapes.
    (_, i) => `message ${i} ` + `ünïcødé "${i}"\n`.repeat(300).slice(0, 2990),
  );
  await writer.client.callTool({
    name: "sync",
    arguments: {
      topic_id: topicId,
      outbox: bodies.map((content_markdown) => ({ content_markdown })),
      wait_seconds: 0,
    },
  });

  const received: string[] = [];
  for (let call = 0; call < 20; call++) {
    const result = await reader.client.callTool({
      name: "sync",
      arguments: { topic_id: topicId, wait_seconds: 0 },
    });
    const structured = result.structuredContent as Structured;
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    const json = JSON.stringify(structured);
    assert.ok(bytes(json) <= CODEX_WHOLE_BYTES, `structuredContent is ${bytes(json)} bytes`);
    assert.ok(bytes(text) <= CODEX_WHOLE_BYTES, `the text is ${bytes(text)} bytes`);
    for (const message of structured.received) {
      assert.ok(text.includes(message.content_markdown), "the text carries the whole body");
      received.push(message.content_markdown);
    }
    assert.equal(structured.cursor.last_seq, structured.received.at(-1)?.seq ?? received.length);
    if (!structured.has_more) break;
  }
  assert.deepEqual(received, bodies, "every message once, in order, whole");
});

/** The budget the oversized-rows test runs with: above any single row it stores. */
const BUDGET = 20_000;
/** What a result adds around its items (keys, sync context, warnings). */
const ENVELOPE = 3_000;

Deno.test("every tool of every profile keeps its result within the budget over oversized rows, images included", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const env = {
    AGENT_BUS_TOOL_RESULT_MAX_BYTES: String(BUDGET),
    AGENT_BUS_MAX_ATTACHMENT_BYTES: String(1_500_000),
  };
  await using peer = await connectInProcess(dbPath, "peer", { env });
  await using chat = await connectInProcess(dbPath, "chatbus", { env });

  // Topics with large metadata, agents with large profiles, large templates.
  for (let i = 0; i < 30; i++) {
    await peer.ok("topic_create", { name: `t${i}`, metadata: { blob: "m".repeat(8_000) } });
  }
  for (let i = 0; i < 40; i++) {
    await chat.ok("agent_register", {
      ide: "Test",
      model: "m",
      description: "d".repeat(2_000),
      capabilities: Array.from({ length: 20 }, (_, k) => `capability-${k}-${"c".repeat(80)}`),
    });
  }
  for (let i = 0; i < 20; i++) {
    await chat.ok("template_create", {
      id: `tpl${i}`,
      name: `T${i}`,
      system_prompt: "s".repeat(6_000),
    });
  }
  // A thread with two messages of a 1 MB image each, one message edited 60 times, and
  // 150 reactions on it (written directly, as an older bus without the bound might hold).
  const alice = await connectAgent(chat, "big");
  const image = btoa("i".repeat(750_000));
  for (let i = 0; i < 2; i++) {
    await post(alice, `picture ${i}`, {
      metadata: { attachments: [{ type: "image", mimeType: "image/png", data: image }] },
    });
  }
  const edited = (await post(alice, "v0")).msg_id as string;
  for (let v = 1; v <= 60; v++) {
    await chat.ok("msg_edit", { message_id: edited, new_content: `v${v} ${"e".repeat(2_000)}` });
  }
  for (let r = 0; r < 150; r++) {
    await execSql(
      dbPath,
      "INSERT INTO bus_reactions (message_id, agent_id, reaction, created_at) VALUES (?, ?, ?, ?)",
      edited,
      `agent-${r}`,
      "👍",
      r,
    );
  }
  const topicId = ((await peer.ok("topic_list", {})).topics as { topic_id: string }[])[0]!.topic_id;
  const args: Record<string, Record<string, unknown>> = {
    msg_list: { thread_id: alice.threadId, after_seq: 0 },
    msg_wait: { thread_id: alice.threadId, after_seq: 0, timeout_ms: 0 },
    msg_get: { message_id: edited },
    msg_edit_history: { message_id: edited },
    msg_search: { query: "picture" },
    thread_get: { thread_id: alice.threadId },
    thread_list: {},
    template_get: { id: "tpl1" },
    bus_connect: { thread_name: "big", ide: "Test", model: "m" },
    topic_list: { status: "all", limit: 100 },
    topic_presence: { topic_id: topicId },
    topic_resolve: { name: "t1" },
    messages_search: { query: "picture", include_content: true },
  };
  // The role and mail profiles over their own large rows: 40 questions and 40 mails of 3 KB.
  await using teacher = await connectInProcess(dbPath, "teacher", { env });
  await using student = await connectInProcess(dbPath, "student", { env });
  await using mailbox = await connectInProcess(dbPath, "mailbox", {
    env,
    server: { agent: "bob" },
  });
  await using peerbus = await connectInProcess(dbPath, "peerbus", {
    env,
    server: { agent: "bob" },
  });
  await using sender = await connectInProcess(dbPath, "peerbus", { env, server: { agent: "al" } });
  for (let i = 0; i < 40; i++) {
    await student.ok("ask", { topic_id: topicId, question: `question ${i}: ${"q".repeat(3_000)}` });
    await sender.ok("bus.send", { to: "bob", body: `mail ${i}: ${"b".repeat(3_000)}` });
    await mailbox.ok("send_to_agent", { name: "bob", msg: `note ${i}: ${"n".repeat(3_000)}` });
  }
  args.teacher_drain = { topic_id: topicId, limit: 100 };
  args.ask_poll = { question_id: "none" };
  args.sync = { topic_id: topicId, wait_seconds: 0 };
  const oversized: string[] = [];
  const callers = [
    ["chatbus", chat],
    ["peer", peer],
    ["teacher", teacher],
    ["student", student],
    ["mailbox", mailbox],
    ["peerbus", peerbus],
  ] as const;
  for (const [name, caller] of callers) {
    for (const tool of (await caller.client.listTools()).tools) {
      const result = await caller.call(tool.name, args[tool.name] ?? {});
      const blocks = result.content as { type: string; text?: string; data?: string }[];
      const text = blocks.filter((b) => b.type === "text").reduce((n, b) => n + bytes(b.text!), 0);
      const structured = bytes(JSON.stringify(result.structuredContent ?? {}));
      const images = blocks.reduce((n, b) => n + (b.data?.length ?? 0), 0);
      if (text > BUDGET + ENVELOPE || structured > BUDGET + ENVELOPE || images > 1_500_000) {
        oversized.push(
          `${name}/${tool.name}: text ${text}, structured ${structured}, images ${images}`,
        );
      }
    }
  }
  assert.deepEqual(oversized, []);
  // The lists that were cut say so.
  assert.equal((await chat.ok("agent_list")).has_more, true);
  assert.equal((await chat.ok("template_list")).has_more, true);
  const history = await chat.ok("msg_edit_history", { message_id: edited });
  assert.equal(history.has_more, true);
  const next = await chat.ok("msg_edit_history", {
    message_id: edited,
    after_version: history.next_after_version,
  });
  assert.equal(
    (next.edits as { version: number }[])[0]!.version,
    (history.next_after_version as number) + 1,
  );
  assert.equal((await peer.ok("topic_list", { status: "all", limit: 100 })).has_more, true);
  const listed = await chat.call("msg_list", { thread_id: alice.threadId, after_seq: 0 });
  const omitted = (listed.content as { type: string; text?: string }[])
    .filter((b) => b.text?.includes("left out to keep this result small"));
  assert.equal(omitted.length, 1, "the second image is named, not sent");
});
