/**
 * `tools/call` with `arguments` that is not an object: every profile answers
 * with the tool error shape and `INVALID_ARGUMENT`, never a JSON-RPC
 * internal error with a schema dump. In process for each profile, and once
 * over real stdio.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectInProcess } from "../_helpers/in_process.ts";
import { INIT_PARAMS, rawServer } from "../_helpers/raw.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const NOT_OBJECTS: unknown[] = [[], "str", 5, true, [{ topic_id: "x" }]];

const PROFILES: { profile: string; tool: string; agent?: string }[] = [
  { profile: "peer", tool: "topic_list" },
  { profile: "peerbus", tool: "bus.peers", agent: "alice" },
  { profile: "mailbox", tool: "check_mail", agent: "alice" },
  { profile: "teacher", tool: "topic_list" },
  { profile: "student", tool: "topic_list" },
];

Deno.test("tools/call with non-object arguments is INVALID_ARGUMENT in every profile", async () => {
  await using tmp = await tmpDir();
  for (const { profile, tool, agent } of PROFILES) {
    await using server = await connectInProcess(`${tmp.path}/bus.sqlite`, profile, {
      server: { agent },
    });
    for (const args of NOT_OBJECTS) {
      const result = await server.client.request(
        { method: "tools/call", params: { name: tool, arguments: args as never } },
        CallToolResultSchema,
      );
      assert.equal(result.isError, true, `${profile} ${tool} ${JSON.stringify(args)}`);
      const error = (result.structuredContent as { error: { code: string; message: string } })
        .error;
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.match(error.message, /arguments/);
    }
    // null is read as no arguments.
    const none = await server.client.request(
      { method: "tools/call", params: { name: tool, arguments: null as never } },
      CallToolResultSchema,
    );
    assert.notEqual(none.isError, true, `${profile}: null arguments are no arguments`);
  }
});

Deno.test("a stdio server answers non-object arguments with a tool error, not -32603", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`);
  await server.request(1, "initialize", INIT_PARAMS);
  await server.next();
  await server.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  await server.request(2, "tools/call", { name: "topic_list", arguments: [] });
  const reply = await server.next() as {
    result?: { isError: boolean; structuredContent: { error: { code: string } } };
    error?: unknown;
  };
  assert.equal(reply.error, undefined, "no JSON-RPC error");
  assert.equal(reply.result?.isError, true);
  assert.equal(reply.result?.structuredContent.error.code, "INVALID_ARGUMENT");
});
