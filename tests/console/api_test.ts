/**
 * The console's REST API on a real `agent-bus http` process, with data made
 * by real agents through MCP (a stdio peer on the same database file).
 */

import assert from "node:assert/strict";
import { z } from "zod";
import { checkAnswer } from "../../lib/console/api.ts";
import { answer, route } from "../../lib/console/route_spec.ts";
import { json } from "../../lib/http_respond.ts";
import { rawStatus } from "../_helpers/http.ts";
import { connectInProcess, type InProcess, serveHttpInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

interface Scene extends AsyncDisposable {
  url: string;
  agent: InProcess;
  topicId: string;
  dbPath: string;
}

/** An HTTP server and an agent ("codex") that opened "alpha" and said two things. */
type Json = Record<string, unknown>;

async function scene(env: Record<string, string> = {}): Promise<Scene> {
  const dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  // In process: the HTTP handler on a socket, and an agent's MCP server on the same file.
  const server = serveHttpInProcess(dbPath, env);
  const agent = await connectInProcess(dbPath, "peer");
  const topicId = (await agent.ok("topic_create", { name: "alpha" })).topic_id as string;
  await agent.ok("topic_join", { agent_name: "codex", topic_id: topicId });
  await agent.ok("sync", {
    topic_id: topicId,
    outbox: [
      { content_markdown: "Migration plan: rename users.name" },
      { content_markdown: "Is the ORM ready?", message_type: "question" },
    ],
    wait_seconds: 0,
  });
  return {
    url: server.url,
    agent,
    topicId,
    dbPath,
    async [Symbol.asyncDispose]() {
      await agent[Symbol.asyncDispose]();
      await server[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

async function get(url: string, headers: HeadersInit = {}) {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: parse(text), text };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: parse(text) };
}

function parse(text: string) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function assertError(result: { status: number; body: unknown }, status: number, code: string) {
  assert.equal(result.status, status, JSON.stringify(result.body));
  const error = (result.body as { error: { code: string; message: string } }).error;
  assert.equal(error.code, code);
  assert.ok(error.message.length > 0);
}

Deno.test("GET /api/topics filters, searches names, sorts and bounds its limit", async () => {
  await using s = await scene();
  const beta = (await s.agent.ok("topic_create", { name: "beta" })).topic_id as string;
  const old = (await s.agent.ok("topic_create", { name: "old alpha" })).topic_id as string;
  await s.agent.ok("topic_close", { topic_id: old });

  const all = await get(`${s.url}/api/topics?status=all`);
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.topics.map((t: { name: string }) => t.name).sort(), [
    "alpha",
    "beta",
    "old alpha",
  ]);
  const alpha = all.body.topics.find((t: { topic_id: string }) => t.topic_id === s.topicId);
  assert.equal(alpha.messages, 2);
  assert.equal(alpha.last_seq, 2);
  assert.equal(alpha.active_agents, 1);
  assert.equal(typeof alpha.last_message_at, "number");

  const open = await get(`${s.url}/api/topics?status=open&sort=name`);
  assert.deepEqual(open.body.topics.map((t: { name: string }) => t.name), ["alpha", "beta"]);
  const named = await get(`${s.url}/api/topics?q=ALPHA&status=all&sort=created`);
  assert.deepEqual(named.body.topics.map((t: { topic_id: string }) => t.topic_id), [
    old,
    s.topicId,
  ]);
  const limited = await get(`${s.url}/api/topics?status=all&limit=1&sort=created`);
  assert.equal(limited.body.count, 1);
  assert.equal(limited.body.total, 3);
  assert.notEqual(limited.body.topics[0].topic_id, beta === s.topicId ? "" : s.topicId);

  assertError(await get(`${s.url}/api/topics?limit=0`), 400, "INVALID_ARGUMENT");
  assertError(await get(`${s.url}/api/topics?limit=100000`), 400, "INVALID_ARGUMENT");
  assertError(await get(`${s.url}/api/topics?status=maybe`), 400, "INVALID_ARGUMENT");
  assertError(await get(`${s.url}/api/topics?sort=size`), 400, "INVALID_ARGUMENT");
});

Deno.test("GET /api/topics/{id} and /messages page through a topic; presence shows a waiting sync", async () => {
  await using s = await scene();
  const shown = await get(`${s.url}/api/topics/${s.topicId}`);
  assert.equal(shown.status, 200);
  assert.equal(shown.body.topic.name, "alpha");
  assert.deepEqual(
    shown.body.messages.map((m: { seq: number; sender: string }) => [m.seq, m.sender]),
    [[1, "codex"], [2, "codex"]],
  );
  assert.equal(shown.body.has_more, false);
  assert.deepEqual(
    shown.body.presence.map((p: { agent_name: string; waiting: boolean }) => [
      p.agent_name,
      p.waiting,
    ]),
    [["codex", false]],
  );

  // While codex waits in sync, presence says so; once it returns, it no longer does.
  const waiting = s.agent.ok("sync", { topic_id: s.topicId, wait_seconds: 20 });
  const deadline = Date.now() + 5000;
  let agents: { agent_name: string; waiting: boolean }[] = [];
  while (Date.now() < deadline) {
    agents = (await get(`${s.url}/api/presence`)).body.topics[s.topicId];
    if (agents?.[0]?.waiting) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(agents.map((a) => [a.agent_name, a.waiting]), [["codex", true]]);
  assert.equal(
    (await post(`${s.url}/api/topics/${s.topicId}/messages`, {
      content_markdown: "wake up",
    })).status,
    201,
  );
  const woke = await waiting as { received: { content_markdown: string; sender: string }[] };
  assert.deepEqual(woke.received.map((m) => [m.sender, m.content_markdown]), [
    ["operator", "wake up"],
  ]);
  const after = (await get(`${s.url}/api/topics/${s.topicId}`)).body.presence;
  assert.equal(after[0].waiting, false);

  for (let i = 0; i < 5; i++) {
    await post(`${s.url}/api/topics/${s.topicId}/messages`, { content_markdown: `m${i}` });
  }
  const latest = await get(`${s.url}/api/topics/${s.topicId}?messages=2`);
  assert.deepEqual(latest.body.messages.map((m: { seq: number }) => m.seq), [7, 8]);
  assert.equal(latest.body.has_more, true);
  const after2 = await get(`${s.url}/api/topics/${s.topicId}/messages?after_seq=2&limit=3`);
  assert.deepEqual(after2.body.messages.map((m: { seq: number }) => m.seq), [3, 4, 5]);
  assert.equal(after2.body.has_more, true);
  const before = await get(`${s.url}/api/topics/${s.topicId}/messages?before_seq=7&limit=2`);
  assert.deepEqual(before.body.messages.map((m: { seq: number }) => m.seq), [5, 6]);
  assert.equal(before.body.has_more, true);
  const first = await get(`${s.url}/api/topics/${s.topicId}/messages?before_seq=3`);
  assert.deepEqual(first.body.messages.map((m: { seq: number }) => m.seq), [1, 2]);
  assert.equal(first.body.has_more, false);

  assertError(
    await get(`${s.url}/api/topics/${s.topicId}/messages?after_seq=1&before_seq=5`),
    400,
    "INVALID_ARGUMENT",
  );
  assertError(
    await get(`${s.url}/api/topics/${s.topicId}/messages?limit=501`),
    400,
    "INVALID_ARGUMENT",
  );
  assertError(
    await get(`${s.url}/api/topics/${s.topicId}/messages?after_seq=-1`),
    400,
    "INVALID_ARGUMENT",
  );
  assertError(await get(`${s.url}/api/topics/nope`), 404, "TOPIC_NOT_FOUND");
  assertError(await get(`${s.url}/api/topics/nope/messages`), 404, "TOPIC_NOT_FOUND");
});

Deno.test("POST /api/topics/{id}/messages posts as the operator or a chosen name, safely", async () => {
  await using s = await scene();
  const url = `${s.url}/api/topics/${s.topicId}/messages`;
  const question = (await get(`${s.url}/api/topics/${s.topicId}`)).body.messages[1];

  const posted = await post(url, {
    content_markdown: "Yes, it maps full_name.",
    message_type: "answer",
    reply_to: question.message_id,
    sender: "alice",
    client_message_id: "k1",
  });
  assert.equal(posted.status, 201);
  assert.equal(posted.body.duplicate, false);
  assert.equal(posted.body.message.sender, "alice");
  assert.equal(posted.body.message.reply_to, question.message_id);
  const again = await post(url, {
    content_markdown: "Yes, it maps full_name.",
    sender: "alice",
    client_message_id: "k1",
  });
  assert.equal(again.status, 200);
  assert.equal(again.body.duplicate, true);
  assert.equal(again.body.message.message_id, posted.body.message.message_id);

  // The agent receives it through sync like any message.
  const got = await s.agent.ok("sync", { topic_id: s.topicId, wait_seconds: 0 }) as {
    received: { sender: string; content_markdown: string; message_type: string }[];
  };
  assert.deepEqual(got.received.map((m) => [m.sender, m.message_type]), [["alice", "answer"]]);

  assertError(await post(url, {}), 400, "INVALID_ARGUMENT");
  assertError(await post(url, { content_markdown: 42 }), 400, "INVALID_ARGUMENT");
  assertError(
    await post(url, { content_markdown: "x", reply_to: "nope" }),
    400,
    "INVALID_ARGUMENT",
  );
  assertError(await post(url, { content_markdown: "x", sender: " " }), 400, "INVALID_ARGUMENT");
  assertError(await post(url, "not json"), 400, "INVALID_ARGUMENT");
  assertError(await post(url, "[1]"), 400, "INVALID_ARGUMENT");
  assertError(
    await post(url, { content_markdown: "x" }, { "content-type": "text/plain" }),
    415,
    "UNSUPPORTED_MEDIA_TYPE",
  );
  assertError(
    await post(url, { content_markdown: "x".repeat(1_000_000) }),
    413,
    "PAYLOAD_TOO_LARGE",
  );
  assertError(
    await post(url, { content_markdown: "x" }, { origin: "http://localhost:9999" }),
    403,
    "FORBIDDEN",
  );
  assertError(
    await post(`${s.url}/api/topics/nope/messages`, { content_markdown: "x" }),
    404,
    "TOPIC_NOT_FOUND",
  );
  // Nothing refused was stored.
  const all = await get(`${s.url}/api/topics/${s.topicId}/messages`);
  assert.equal(all.body.messages.length, 3);

  // Same-origin posting (what the page sends) is accepted.
  const same = await post(url, { content_markdown: "from the page" }, { origin: s.url });
  assert.equal(same.status, 201);
  assert.equal(same.body.message.sender, "operator");
});

Deno.test("POST /api/topics creates or reuses; close closes once; closed topics refuse posts", async () => {
  await using s = await scene();
  const created = await post(`${s.url}/api/topics`, { name: "gamma" });
  assert.equal(created.status, 201);
  assert.equal(created.body.reused, false);
  assert.equal(created.body.topic.name, "gamma");
  const reused = await post(`${s.url}/api/topics`, { name: "gamma" });
  assert.equal(reused.status, 200);
  assert.equal(reused.body.topic.topic_id, created.body.topic.topic_id);
  const fresh = await post(`${s.url}/api/topics`, { name: "gamma", mode: "new" });
  assert.equal(fresh.status, 201);
  assert.notEqual(fresh.body.topic.topic_id, created.body.topic.topic_id);
  assertError(await post(`${s.url}/api/topics`, { name: 7 }), 400, "INVALID_ARGUMENT");
  assertError(await post(`${s.url}/api/topics`, { name: "" }), 400, "INVALID_ARGUMENT");

  const closed = await post(`${s.url}/api/topics/${s.topicId}/close`, { reason: "shipped" });
  assert.equal(closed.status, 200);
  assert.equal(closed.body.topic.status, "closed");
  assert.equal(closed.body.topic.close_reason, "shipped");
  assert.deepEqual(closed.body.warnings, []);
  const twice = await post(`${s.url}/api/topics/${s.topicId}/close`, {});
  assert.equal(twice.body.warnings[0].code, "ALREADY_CLOSED");
  assertError(
    await post(`${s.url}/api/topics/${s.topicId}/messages`, { content_markdown: "late" }),
    409,
    "TOPIC_CLOSED",
  );
  assertError(await post(`${s.url}/api/topics/nope/close`, {}), 404, "TOPIC_NOT_FOUND");
  const listed = await s.agent.ok("topic_list", { status: "closed" }) as {
    topics: { topic_id: string }[];
  };
  assert.deepEqual(listed.topics.map((t) => t.topic_id), [s.topicId]);
});

Deno.test("GET /api/topics/{id}/export gives Markdown or JSON files; search finds messages", async () => {
  await using s = await scene();
  const md = await get(`${s.url}/api/topics/${s.topicId}/export`);
  assert.equal(md.status, 200);
  assert.match(md.headers.get("content-type")!, /^text\/markdown/);
  assert.match(md.headers.get("content-disposition")!, /attachment; filename="alpha\.md"/);
  assert.match(md.text, /^# alpha\n/);
  assert.match(md.text, /### \[2\] codex\n\n\*question · .*\*\n\nIs the ORM ready\?/);
  const js = await get(`${s.url}/api/topics/${s.topicId}/export?format=json`);
  assert.equal(js.body.topic_name, "alpha");
  assert.equal(js.body.message_count, 2);
  assert.equal(js.body.messages[0].content_markdown, "Migration plan: rename users.name");
  assertError(
    await get(`${s.url}/api/topics/${s.topicId}/export?format=pdf`),
    400,
    "INVALID_ARGUMENT",
  );
  assertError(await get(`${s.url}/api/topics/nope/export`), 404, "TOPIC_NOT_FOUND");

  const found = await get(`${s.url}/api/search?q=migration&mode=fts&topic_id=${s.topicId}`);
  assert.equal(found.status, 200);
  assert.equal(found.body.results.length, 1);
  assert.equal(found.body.results[0].seq, 1);
  assert.match(found.body.results[0].snippet, /«Migration»/);
  const none = await get(`${s.url}/api/search?q=migration&mode=fts&topic_id=other`);
  assert.equal(none.body.results.length, 0);
  assertError(await get(`${s.url}/api/search`), 400, "INVALID_ARGUMENT");
  assertError(await get(`${s.url}/api/search?q=x&limit=101`), 400, "INVALID_ARGUMENT");
  assertError(await get(`${s.url}/api/search?q=x&mode=magic`), 400, "INVALID_ARGUMENT");
});

Deno.test("the API describes itself in OpenAPI and answers unknown routes and methods with JSON", async () => {
  await using s = await scene();
  const doc = await get(`${s.url}/api/openapi.json`);
  assert.equal(doc.body.openapi, "3.1.0");
  assert.deepEqual(Object.keys(doc.body.paths).sort(), [
    "/api/agents",
    "/api/agents/heartbeat",
    "/api/agents/register",
    "/api/agents/resume",
    "/api/agents/unregister",
    "/api/agents/{id}",
    "/api/agents/{id}/kick",
    "/api/debug/sse-status",
    "/api/events",
    "/api/messages/{id}",
    "/api/messages/{id}/history",
    "/api/messages/{id}/reactions",
    "/api/messages/{id}/reactions/{reaction}",
    "/api/messages/{message_id}/attachments/{n}",
    "/api/metrics",
    "/api/openapi.json",
    "/api/presence",
    "/api/search",
    "/api/settings",
    "/api/settings/manifest",
    "/api/templates",
    "/api/templates/{id}",
    "/api/threads",
    "/api/threads/{id}",
    "/api/threads/{id}/admin",
    "/api/threads/{id}/agents",
    "/api/threads/{id}/archive",
    "/api/threads/{id}/close",
    "/api/threads/{id}/export",
    "/api/threads/{id}/messages",
    "/api/threads/{id}/rename",
    "/api/threads/{id}/settings",
    "/api/threads/{id}/state",
    "/api/threads/{id}/sync-context",
    "/api/threads/{id}/transcript",
    "/api/threads/{id}/unarchive",
    "/api/topics",
    "/api/topics/{id}",
    "/api/topics/{id}/close",
    "/api/topics/{id}/export",
    "/api/topics/{id}/messages",
    "/api/upload/image",
    "/health",
  ]);
  assertError(await get(`${s.url}/api/nope`), 404, "NOT_FOUND");
  const put = await fetch(`${s.url}/api/topics`, { method: "PUT" });
  assertError({ status: put.status, body: await put.json() }, 405, "METHOD_NOT_ALLOWED");
  assert.equal((await get(`${s.url}/nope`)).status, 404);
});

Deno.test("the page and the API keep the HTTP guard: token, cookie, Host, Origin, security headers", async () => {
  await using s = await scene({ AGENT_BUS_HTTP_TOKEN: "s3cret-token" });
  assertError(await get(`${s.url}/api/topics`), 401, "UNAUTHORIZED");
  assertError(await get(`${s.url}/api/events`), 401, "UNAUTHORIZED");
  assertError(
    await get(`${s.url}/api/topics`, { authorization: "Bearer wrong" }),
    401,
    "UNAUTHORIZED",
  );
  const page = await get(`${s.url}/`);
  assert.equal(page.status, 401);
  assert.match(page.body.error.message, /\/\?token=/);
  assert.equal(
    (await get(`${s.url}/api/topics`, { authorization: "Bearer s3cret-token" })).status,
    200,
  );
  assertError(
    await post(`${s.url}/api/topics`, { name: "x" }, { authorization: "Bearer wrong" }),
    401,
    "UNAUTHORIZED",
  );

  // Opening /?token= trades the token for an HttpOnly same-site cookie.
  const login = await fetch(`${s.url}/?token=s3cret-token`, { redirect: "manual" });
  await login.body?.cancel();
  assert.equal(login.status, 303);
  assert.equal(login.headers.get("location"), "/");
  const cookie = login.headers.get("set-cookie")!;
  assert.match(cookie, /^agent_bus_token=s3cret-token; Path=\/; HttpOnly; SameSite=Strict$/);
  const withCookie = { cookie: "agent_bus_token=s3cret-token" };
  const html = await get(`${s.url}/`, withCookie);
  assert.equal(html.status, 200);
  assert.match(html.text, /<title>agent-bus<\/title>/);
  const csp = html.headers.get("content-security-policy")!;
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /script-src[^;]*unsafe-inline/);
  assert.equal(html.headers.get("x-content-type-options"), "nosniff");
  assert.equal((await get(`${s.url}/api/topics`, withCookie)).status, 200);
  assert.equal((await get(`${s.url}/assets/app.js`, withCookie)).status, 200);
  assert.equal((await fetch(`${s.url}/assets/app.js`)).status, 401);

  const mixed = await fetch(`${s.url}/?token=nope`, { redirect: "manual", headers: withCookie });
  await mixed.body?.cancel();
  assert.equal(mixed.status, 303);
  assert.equal(mixed.headers.get("set-cookie"), null, "a wrong token never becomes the cookie");
  const badLogin = await fetch(`${s.url}/?token=nope`, { redirect: "manual" });
  await badLogin.body?.cancel();
  assert.equal(badLogin.status, 401);
  const port = Number(new URL(s.url).port);
  const rebound = (path: string) =>
    rawStatus(port, { method: "GET", path, host: "evil.example.com", headers: withCookie });
  assert.equal(await rebound("/api/topics"), 403);
  assert.equal(await rebound("/"), 403);
  assertError(
    await get(`${s.url}/api/topics`, { ...withCookie, origin: "https://evil.example.com" }),
    403,
    "FORBIDDEN",
  );
});

Deno.test("every JSON answer of AgentChatBus's routes is described by a schema, which the tests' servers check", async () => {
  await using s = await scene();
  const doc = await get(`${s.url}/api/openapi.json`);
  const chatbus = (path: string) =>
    path === "/health" ||
    /^\/api\/(threads|messages|agents|templates|upload|metrics|debug|settings)\b/
      .test(path);
  const undescribed: string[] = [];
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Json>)) {
    if (!chatbus(path) || path.includes("/attachments/")) continue; // (attachments: the console's)
    for (const [method, operation] of Object.entries(operations as Record<string, Json>)) {
      for (
        const [status, response] of Object.entries(operation.responses as Record<string, Json>)
      ) {
        if (response.$ref !== undefined) continue; // an error, described once for all routes
        const content = response.content as Record<string, Json> | undefined;
        const described = content?.["application/json"]?.schema !== undefined;
        // (A Markdown export and a 204 carry no JSON.)
        if (!described && !content?.["text/markdown"] && status !== "204") {
          undescribed.push(`${method} ${path} ${status}`);
        }
      }
    }
  }
  assert.deepEqual(undescribed, []);

  // An answer that drifts from its schema is the server's error where answers are checked.
  const spec = route({
    method: "GET",
    path: "/api/example",
    summary: "An example",
    responses: { "200": answer("A count", z.object({ count: z.int() })) },
    handle: () => json({ count: 1 }),
  });
  await checkAnswer(spec, json({ count: 1 }));
  await assert.rejects(checkAnswer(spec, json({ count: "one" })), /off its schema/);
});
