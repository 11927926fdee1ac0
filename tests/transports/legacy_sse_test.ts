/**
 * The older HTTP+SSE transport at `/sse` + `/messages` (as AgentChatBus
 * serves it), driven by the MCP SDK's own `SSEClientTransport` against a
 * real `agent-bus http` process: the session gets `/mcp`'s tools, calls
 * work and their answers come back on the stream; malformed POSTs are
 * refused.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { startHttpServer } from "../_helpers/http.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { until } from "../_helpers/peer.ts";

Deno.test("an HTTP+SSE client (the 2024-11-05 transport) works at /sse, with /mcp's tools", async () => {
  await using dir = await tmpDir();
  await using server = await startHttpServer({
    dbPath: `${dir.path}/bus.sqlite`,
    args: ["--mcp-profile", "chatbus"],
  });
  const client = new Client({ name: "legacy-sse", version: "0.0.0" });
  const transport = new SSEClientTransport(new URL(`${server.url}/sse`));
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(tools.includes("bus_connect") && tools.includes("msg_wait"), tools.join(","));
    await client.ping();
    const result = await client.callTool({
      name: "bus_connect",
      arguments: { thread_name: "legacy", ide: "Old IDE", model: "m" },
    });
    assert.equal(result.isError, undefined, JSON.stringify(result.content).slice(0, 300));
    const text = (result.content as { text: string }[])[0]!.text;
    assert.equal(JSON.parse(text).thread.topic, "legacy");
  } finally {
    await client.close();
  }

  const post = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      ...init,
    });
  for (
    const [path, init, status] of [
      ["/messages", {}, 400],
      ["/messages?sessionId=nope", {}, 404],
      ["/messages?session_id=nope", {}, 404],
      ["/messages?sessionId=x", { method: "GET", body: undefined }, 405],
      ["/sse", { headers: { origin: "https://evil.example" } }, 403],
    ] as const
  ) {
    const response = await post(path, init as RequestInit);
    assert.equal(response.status, status, `${path} ${JSON.stringify(init)}`);
    await response.body?.cancel();
  }
});

Deno.test("AgentChatBus's one-shot endpoint POST /mcp/messages answers {result} with /mcp's tools", async () => {
  await using dir = await tmpDir();
  await using server = await startHttpServer({
    dbPath: `${dir.path}/bus.sqlite`,
    args: ["--mcp-profile", "chatbus"],
  });
  const send = async (body: unknown, path = "/mcp/messages") => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
  };
  // As AgentChatBus's own tests call it: no jsonrpc field, `/mcp/messages/` too.
  const listed = await send({ id: 1, method: "tools/list" }, "/mcp/messages/");
  assert.equal(listed.status, 200);
  const names = listed.body.result.tools.map((tool: { name: string }) => tool.name);
  assert.ok(names.includes("bus_connect") && names.includes("msg_post"), names.join(","));

  const connected = await send({
    id: 2,
    method: "tools/call",
    params: {
      name: "bus_connect",
      arguments: { thread_name: "one-shot", ide: "Script", model: "m" },
    },
  });
  assert.equal(connected.status, 200, JSON.stringify(connected.body));
  const joined = JSON.parse(connected.body.result.content[0].text);
  assert.equal(joined.thread.topic, "one-shot");
  // Nothing is kept between requests: the next call brings the agent's credentials.
  const posted = await send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: {
      name: "msg_post",
      arguments: {
        thread_id: joined.thread.thread_id,
        author: joined.agent.agent_id,
        token: joined.agent.token,
        content: "posted through /mcp/messages",
        expected_last_seq: joined.current_seq,
        reply_token: joined.reply_token,
      },
    },
  });
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  assert.equal(posted.body.result.isError, undefined, JSON.stringify(posted.body));
  const messages = await fetch(`${server.url}/api/threads/${joined.thread.thread_id}/messages`);
  assert.deepEqual((await messages.json()).map((m: { content: string }) => m.content), [
    "posted through /mcp/messages",
  ]);

  assert.equal((await send({ method: "notifications/initialized" })).status, 204);
  const unknown = await send({ id: 4, method: "no/such/method" });
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error, /not found/i);
  const missing = await send({ id: 5 });
  assert.deepEqual([missing.status, missing.body.error], [400, "INVALID_REQUEST"]);
  const refused = await fetch(`${server.url}/mcp/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: "https://evil.example" },
    body: JSON.stringify({ id: 6, method: "tools/list" }),
  });
  assert.equal(refused.status, 403);
  await refused.body?.cancel();
});

Deno.test("a msg_wait over POST /mcp/messages ends when its client leaves; an aborted body logs nothing", async () => {
  await using dir = await tmpDir();
  await using server = await startHttpServer({
    dbPath: `${dir.path}/bus.sqlite`,
    args: ["--mcp-profile", "chatbus"],
  });
  const call = (name: string, args: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${server.url}/mcp/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: 1, method: "tools/call", params: { name, arguments: args } }),
      signal,
    });
  const connected = await (await call("bus_connect", {
    thread_name: "left",
    ide: "Script",
    model: "m",
  })).json();
  const joined = JSON.parse(connected.result.content[0].text);
  const threadId = joined.thread.thread_id as string;
  const waiting = async () => {
    const listed = await (await fetch(`${server.url}/api/threads`)).json();
    const thread = listed.threads.find((t: { id: string }) => t.id === threadId);
    return (thread.waiting_agents as unknown[]).length;
  };
  // A wait of ten minutes, and its client goes once the agent shows as waiting.
  const client = new AbortController();
  const wait = call("msg_wait", {
    thread_id: threadId,
    after_seq: joined.current_seq,
    timeout_ms: 600_000,
    agent_id: joined.agent.agent_id,
    token: joined.agent.token,
  }, client.signal).catch(() => undefined);
  await until(async () => await waiting() === 1, { what: "the agent waiting" });
  client.abort();
  await wait;
  await until(async () => await waiting() === 0, { what: "the wait to end with its client" });

  // Bodies cut short by their clients: answered to nobody, with no stack in the log.
  for (const path of ["/mcp/messages", "/mcp", "/api/topics", "/chatbus/mcp"]) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    await conn.write(new TextEncoder().encode(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":`,
    ));
    conn.close();
  }
  // (A request after them is answered: they were handled, and nothing was logged for them.)
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
  assert.doesNotMatch(server.stderr(), /BadResource|^\s+at /m);
});
