/**
 * `openRuntime()` for what `AGENT_BUS_DB` names: a URL is never a file (no
 * directory `postgres:` appears); an unreachable PostgreSQL server and an
 * unknown scheme are clear errors from every tool that needs the store,
 * `ping` still answers, and the password never shows.
 */

import assert from "node:assert/strict";
import { connectInProcess } from "./_helpers/in_process.ts";
import { failureOf } from "./_helpers/peer.ts";

Deno.test("an unreachable postgres:// AGENT_BUS_DB is a clear DB_UNAVAILABLE, never a file", async () => {
  // Port 9 on loopback: nothing listens there.
  await using server = await connectInProcess("postgres://bus:hunter2@127.0.0.1:9/bus", "peer");
  const result = await server.client.callTool({ name: "topic_list", arguments: {} });
  const failure = failureOf("topic_list", result as never);
  assert.equal(failure.code, "DB_UNAVAILABLE");
  assert.match(failure.message, /Cannot reach the PostgreSQL database at postgres:\/\/bus:\*\*\*@/);
  assert.doesNotMatch(JSON.stringify(result), /hunter2/);
  assert.equal((await server.ok("ping")).ok, true);
  assert.throws(() => Deno.statSync("postgres:"), Deno.errors.NotFound, "no directory postgres:");
});

Deno.test("an AGENT_BUS_DB with an unknown scheme says which stores there are", async () => {
  await using server = await connectInProcess("mysql://bus:hunter2@127.0.0.1:3306/bus", "peer");
  const result = await server.client.callTool({ name: "topic_list", arguments: {} });
  const failure = failureOf("topic_list", result as never);
  assert.equal(failure.code, "DB_UNAVAILABLE");
  assert.match(failure.message, /mysql:\/\/ URL .*SQLite file .* PostgreSQL/);
  assert.doesNotMatch(JSON.stringify(result), /hunter2/);
  assert.equal((await server.ok("ping")).ok, true);
  assert.throws(() => Deno.statSync("mysql:"), Deno.errors.NotFound, "no directory mysql:");
});
