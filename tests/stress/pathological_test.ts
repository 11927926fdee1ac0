/**
 * No input may stall the bus: every tool (of the peer and chatbus profiles)
 * of every text argument, every HTTP route and guarded header, and the
 * clients' hooks (bodies quoted in their reason, hostile stdin), gets pathological input (long runs of one
 * character, alternating case, many separators, deep nesting, multi-byte
 * text) while a second process keeps sending. Each call must come back
 * promptly with a proper answer, and the other process must never wait for
 * the lock or fail. The bound is generous (a machine with a CPU hog beside
 * it passes); the quadratic code this guards against took 10–16 s per call.
 */

import assert from "node:assert/strict";
import { connectAgent, post } from "../_helpers/chat.ts";
import { deepObject, MAX_BODY, PATHOLOGICAL_TEXTS } from "../_helpers/pathological.ts";
import { hookShell, startFakeClient } from "../_helpers/hook.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Longest any one call may take. */
const CALL_BOUND_MS = 3_000;

/** A second process that sends one small message after another until stopped. */
function backgroundSender(peer: Peer, topicId: string) {
  const latencies: number[] = [];
  const errors: string[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      const result = await peer.call("sync", {
        topic_id: topicId,
        outbox: [{ content_markdown: `beat ${i}` }],
        wait_seconds: 0,
      });
      latencies.push(performance.now() - started);
      if (result.isError) errors.push(JSON.stringify(result.structuredContent));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { latencies, errors };
    },
  };
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  assert.ok(ms < CALL_BOUND_MS, `${what} took ${ms.toFixed(0)} ms`);
  return value;
}

Deno.test("pathological input to every tool returns promptly while another process writes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  await using b = await startPeer({ dbPath });
  const { topic_id: topicId } = await a.ok("topic_create", { name: "hostile-text" });
  await a.ok("topic_join", { agent_name: "a", topic_id: topicId });
  await b.ok("topic_join", { agent_name: "b", topic_id: topicId });
  const sender = backgroundSender(b, String(topicId));
  try {
    // One character over the contract's limit is refused, and the limit itself is served at once.
    const over = await timed("a 65,537-character body", () =>
      a.call("sync", {
        topic_id: topicId,
        outbox: [{ content_markdown: "X".repeat(MAX_BODY + 1) }],
        wait_seconds: 0,
      }));
    assert.equal(
      (over.structuredContent as { error: { code: string } }).error.code,
      "INVALID_ARGUMENT",
    );
    for (const { name, text } of PATHOLOGICAL_TEXTS) {
      const sent = await timed(`sync of ${name}`, () =>
        a.call("sync", {
          topic_id: topicId,
          outbox: [{ content_markdown: text }],
          wait_seconds: 0,
        }));
      assert.notEqual(sent.isError, true, `${name}: ${JSON.stringify(sent.structuredContent)}`);
      const query = text.slice(0, 16_384);
      const found = await timed(
        `search for ${name}`,
        () => a.call("messages_search", { query, mode: "fts", include_content: true }),
      );
      if (found.isError) {
        // Only a query with no searchable word is refused (the whitespace run).
        assert.equal(
          (found.structuredContent as { error: { code: string } }).error.code,
          "INVALID_ARGUMENT",
          `search ${name}`,
        );
      }
      for (
        const [tool, args] of [
          ["topic_create", { name: text }],
          ["topic_resolve", { name: text }],
          ["topic_join", { agent_name: text, topic_id: topicId }],
          ["topic_join", { agent_name: "a", name: text }],
          ["sync", { topic_id: text, wait_seconds: 0 }],
          ["topic_presence", { topic_id: text }],
          ["cursor_reset", { topic_id: text }],
          ["sync", {
            topic_id: topicId,
            outbox: [{ content_markdown: "x", message_type: text, client_message_id: text }],
            wait_seconds: 0,
          }],
        ] as const
      ) {
        const result = await timed(`${tool} with ${name}`, () => a.call(tool, args));
        assert.equal(result.isError, true, `${tool} refuses ${name}`);
      }
    }
    const deep = await timed("deeply nested metadata", () =>
      a.call("sync", {
        topic_id: topicId,
        outbox: [{ content_markdown: "deep", metadata: deepObject(5_000) }],
        wait_seconds: 0,
      }));
    assert.equal(deep.isError, true);
    assert.equal(
      (deep.structuredContent as { error: { code: string } }).error.code,
      "INVALID_ARGUMENT",
    );
  } finally {
    const { latencies, errors } = await sender.stop();
    assert.deepEqual(errors, [], "the other process never failed");
    assert.ok(latencies.length > 0);
    const worst = Math.max(...latencies);
    assert.ok(worst < CALL_BOUND_MS, `the other process waited ${worst.toFixed(0)} ms once`);
  }
});

Deno.test("pathological input to every chatbus tool returns promptly while another process writes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using chat = await startPeer({ dbPath, args: ["--profile", "chatbus"] });
  await using b = await startPeer({ dbPath });
  const alice = await connectAgent(chat, "hostile-chat");
  const { topic_id: busy } = await b.ok("topic_create", { name: "beside" });
  await b.ok("topic_join", { agent_name: "b", topic_id: busy });
  const sender = backgroundSender(b, String(busy));
  try {
    for (const { name, text } of PATHOLOGICAL_TEXTS) {
      // A body within the limit is stored (and searchable), whatever it holds.
      const posted = await timed(`msg_post of ${name}`, () => post(alice, text));
      const edited = await timed(`msg_edit to ${name}`, () =>
        chat.call("msg_edit", {
          message_id: posted.msg_id as string,
          new_content: `${text.slice(1)}!`,
        }));
      assert.notEqual(edited.isError, true, `${name}: ${JSON.stringify(edited.structuredContent)}`);
      await timed(
        `msg_search for ${name}`,
        () => chat.call("msg_search", { query: text.slice(0, 16_384), thread_id: alice.threadId }),
      );
      for (
        const [tool, args] of [
          ["bus_connect", { thread_name: text, ide: text, model: text }],
          ["thread_create", { topic: text, agent_id: alice.agentId, token: alice.token }],
          ["thread_list", { before: text }],
          ["msg_post", {
            thread_id: alice.threadId,
            author: text,
            content: "x",
            expected_last_seq: 0,
            reply_token: text,
            metadata: { handoff_target: text, mentions: [text], attachments: [{ data: text }] },
          }],
          ["msg_react", { message_id: text, reaction: text }],
          ["msg_wait", { thread_id: text, after_seq: 0, timeout_ms: 0 }],
          ["template_create", { id: text, name: text, system_prompt: text }],
          ["agent_update", { agent_id: alice.agentId, token: text, description: text }],
        ] as const
      ) {
        const result = await timed(`${tool} with ${name}`, () => chat.call(tool, args));
        assert.equal(result.isError, true, `${tool} refuses ${name}`);
      }
    }
  } finally {
    const { latencies, errors } = await sender.stop();
    assert.deepEqual(errors, [], "the other process never failed");
    const worst = Math.max(...latencies);
    assert.ok(worst < CALL_BOUND_MS, `the other process waited ${worst.toFixed(0)} ms once`);
  }
});

Deno.test("pathological headers, paths and queries on every HTTP route are answered promptly", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using http = await startHttpServer({ dbPath, env: { AGENT_BUS_HTTP_TOKEN: "s3cret" } });
  await using b = await startPeer({ dbPath });
  const { topic_id: topicId } = await b.ok("topic_create", { name: "hostile-http" });
  await b.ok("topic_join", { agent_name: "b", topic_id: topicId });
  const sender = backgroundSender(b, String(topicId));
  const good = { authorization: "Bearer s3cret" };
  const long = "a".repeat(30_000);
  const cases: { what: string; path: string; init?: RequestInit; expect?: number[] }[] = [
    {
      what: "Origin with 30k slashes",
      path: "/mcp",
      init: { headers: { ...good, origin: `http://a${"/".repeat(30_000)}b` } },
      expect: [403],
    },
    {
      what: "Authorization padded with 30k spaces",
      path: "/api/topics",
      init: { headers: { authorization: `Bearer${" ".repeat(30_000)}x!` } },
      expect: [401],
    },
    {
      what: "malformed cookie",
      path: "/api/topics",
      init: { headers: { cookie: "agent_bus_token=%E0%A4%A" } },
      expect: [401],
    },
    {
      what: "30k-character cookie",
      path: "/api/topics",
      init: { headers: { cookie: `agent_bus_token=${"%".repeat(30_000)}` } },
      expect: [401],
    },
    { what: "Host of 30k characters", path: "/", init: { headers: { host: long } } },
    {
      what: "long agent path",
      path: `/agents/${long.slice(0, 6000)}/mcp/`,
      init: { headers: good },
    },
    {
      what: "long search query of one letter",
      path: `/api/search?q=${"X".repeat(16_000)}&mode=fts`,
      init: { headers: good },
    },
    {
      what: "long search query of alternating case",
      path: `/api/search?q=${"aB".repeat(8_000)}&mode=fts`,
      init: { headers: good },
    },
    {
      what: "long topic path",
      path: `/api/topics/${long.slice(0, 6000)}`,
      init: { headers: good },
    },
    {
      what: "mailbox shorthand with a pathological body",
      path: "/agents/alice/mcp/",
      init: {
        method: "POST",
        headers: { ...good, "content-type": "application/json" },
        body: JSON.stringify({
          tool: "send_to_agent",
          args: { name: "bob", msg: PATHOLOGICAL_TEXTS[0]!.text },
        }),
      },
      expect: [200],
    },
  ];
  try {
    for (const { what, path, init, expect } of cases) {
      const response = await timed(what, () => fetch(`${http.url}${path}`, init));
      await response.body?.cancel();
      assert.ok(response.status < 500, `${what}: ${response.status}`);
      if (expect) assert.ok(expect.includes(response.status), `${what}: ${response.status}`);
    }
  } finally {
    const { latencies, errors } = await sender.stop();
    assert.deepEqual(errors, []);
    assert.ok(Math.max(...latencies) < CALL_BOUND_MS);
  }
});

Deno.test("pathological bodies and hook inputs: every hook run answers promptly with JSON", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  await using agent = await startFakeClient(db, { cwd: tmp.path, topic: "hostile", agent: "a" });
  await using writer = await startPeer({ dbPath: db });
  await writer.ok("topic_join", { agent_name: "w", topic_id: agent.topicId });
  const onStop = hookShell(db, { client: "claude-code", event: "Stop" });
  const onPrompt = hookShell(db, { client: "gemini", event: "BeforeAgent" });
  for (const { name, text } of PATHOLOGICAL_TEXTS) {
    await writer.ok("sync", {
      topic_id: agent.topicId,
      outbox: [{ content_markdown: text }],
      wait_seconds: 0,
    });
    const inputs: Record<string, unknown>[] = [
      { session_id: text, cwd: tmp.path, stop_hook_active: false },
      { session_id: "s", cwd: text, stop_hook_active: true, prompt_response: text },
      { session_id: "s", cwd: tmp.path, nested: deepObject(5_000) },
    ];
    for (const [i, input] of inputs.entries()) {
      for (const command of [onStop, onPrompt]) {
        const result = await timed(`${name}, input ${i}`, () => agent.hook(command, input));
        assert.equal(result.code, 0, `${name}: ${result.stderr}`);
        assert.equal(typeof result.out, "object");
      }
    }
  }
});
