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
