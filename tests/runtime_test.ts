/**
 * `openRuntime()` for what `AGENT_BUS_DB` names: a URL is never a file (no
 * directory `postgres:` appears), every tool that needs the store says why
 * it cannot have one, `ping` still answers, and the password never shows.
 */

import assert from "node:assert/strict";
import { connectInProcess } from "./_helpers/in_process.ts";
import { failureOf } from "./_helpers/peer.ts";

Deno.test("a postgres:// AGENT_BUS_DB is a clear DB_UNAVAILABLE, never a file", async () => {
  await using server = await connectInProcess("postgres://bus:hunter2@127.0.0.1:5432/bus", "peer");
  const result = await server.client.callTool({ name: "topic_list", arguments: {} });
  const failure = failureOf("topic_list", result as never);
  assert.equal(failure.code, "DB_UNAVAILABLE");
  assert.match(failure.message, /postgres:\/\/ URL .*SQLite file/);
  assert.doesNotMatch(JSON.stringify(result), /hunter2/);
  assert.equal((await server.ok("ping")).ok, true);
  assert.throws(() => Deno.statSync("postgres:"), Deno.errors.NotFound, "no directory postgres:");
});
