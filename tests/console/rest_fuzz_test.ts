/**
 * Hostile ids and random requests against every REST route (the console's
 * and AgentChatBus's), on whichever store the suite runs on: no answer is a
 * server error. An id with a NUL character (which PostgreSQL text cannot
 * hold) is not found, over REST and through the tools, as on SQLite; text
 * with a NUL is refused as a bad argument where the store cannot keep it.
 */

import assert from "node:assert/strict";
import { connectInProcess, serveHttpInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { fuzzer } from "../stress/_fuzz.ts";
import { prng } from "../stress/_size.ts";

const HOSTILE_IDS = [
  "a%00b",
  "%00",
  "%00%00",
  "x%00".repeat(20),
  "%E0%A4%A",
  "..",
  "x".repeat(300),
];

Deno.test("an id with a NUL is not found on every route and tool, never a server error", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using http = serveHttpInProcess(dbPath);
  const paths = (id: string) => [
    `/api/threads/${id}`,
    `/api/threads/${id}/messages`,
    `/api/threads/${id}/transcript`,
    `/api/threads/${id}/settings`,
    `/api/threads/${id}/agents`,
    `/api/threads/${id}/admin`,
    `/api/threads/${id}/export`,
    `/api/templates/${id}`,
    `/api/agents/${id}`,
    `/api/messages/${id}/history`,
    `/api/messages/${id}/reactions`,
    `/api/messages/${id}/attachments/0`,
    `/api/topics/${id}`,
    `/api/topics/${id}/messages`,
    `/api/topics/${id}/export`,
    `/api/search?q=x&thread_id=${id}`,
    `/api/events?topic_id=${id}`,
  ];
  for (const id of HOSTILE_IDS) {
    for (const path of paths(id)) {
      const response = await fetch(`${http.url}${path}`, { signal: AbortSignal.timeout(10_000) });
      // (An event stream that opens is answered 200 and stays open.)
      const text = response.status === 200 && path.startsWith("/api/events")
        ? await response.body!.cancel().then(() => "")
        : await response.text();
      assert.ok(response.status < 500, `GET ${path} -> ${response.status} ${text.slice(0, 200)}`);
    }
    for (const path of [`/api/threads/${id}/close`, `/api/agents/${id}/kick`]) {
      const response = await fetch(`${http.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      const text = await response.text();
      assert.ok(response.status < 500, `POST ${path} -> ${response.status} ${text.slice(0, 200)}`);
    }
  }
  await using chat = await connectInProcess(dbPath, "chatbus");
  for (const id of ["a\u0000b", "\u0000"]) {
    assert.equal((await chat.ok("msg_get", { message_id: id })).found, false);
    assert.equal((await chat.fail("thread_get", { thread_id: id })).code, "THREAD_NOT_FOUND");
    assert.equal((await chat.fail("template_get", { template_id: id })).code, "TEMPLATE_NOT_FOUND");
  }
  await using peer = await connectInProcess(dbPath, "peer");
  assert.equal(
    (await peer.fail("topic_join", { agent_name: "a", topic_id: "t\u0000" })).code,
    "TOPIC_NOT_FOUND",
  );
});

Deno.test("600 random requests to every REST route answer without a server error", async () => {
  const seed = 36_009;
  const random = prng(seed);
  const { pick, value } = fuzzer(random);
  await using tmp = await tmpDir();
  await using http = serveHttpInProcess(`${tmp.path}/bus.sqlite`, {
    AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
  });
  const created = await (await fetch(`${http.url}/api/topics`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "fuzzed" }),
  })).json();
  const ids = [created.topic.topic_id as string, "nope", ...HOSTILE_IDS];
  const route = () => {
    const id = pick(ids);
    return pick([
      "/api/topics",
      `/api/topics/${id}`,
      `/api/topics/${id}/messages`,
      "/api/threads",
      `/api/threads/${id}`,
      `/api/threads/${id}/messages`,
      `/api/threads/${id}/state`,
      `/api/threads/${id}/rename`,
      `/api/threads/${id}/sync-context`,
      "/api/templates",
      `/api/templates/${id}`,
      "/api/agents/register",
      "/api/agents/heartbeat",
      `/api/agents/${id}`,
      `/api/messages/${id}`,
      `/api/messages/${id}/reactions`,
      "/api/search",
      "/api/settings",
      "/api/metrics",
    ]);
  };
  const query = () => {
    const params = new URLSearchParams();
    for (let k = 0; k < Math.floor(random() * 3); k++) {
      const v = value();
      const key = pick(["q", "limit", "after_seq", "include_archived", "status", "thread_id"]);
      params.set(key, (typeof v === "string" ? v : JSON.stringify(v) ?? "").slice(0, 2000));
    }
    return params.size ? `?${params}` : "";
  };
  for (let i = 0; i < 600; i++) {
    const path = route();
    const method = pick(["GET", "GET", "POST", "POST", "PUT", "DELETE"]);
    const body = method === "GET" || method === "DELETE" ? undefined : JSON.stringify(
      random() < 0.5 ? value() : { content: value(), topic: value(), content_markdown: value() },
    );
    const response = await fetch(`${http.url}${path}${query()}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    assert.ok(
      response.status < 500,
      `seed ${seed}, request ${i}: ${method} ${path} -> ${response.status} ${text.slice(0, 300)}`,
    );
  }
});
