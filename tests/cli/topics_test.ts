/**
 * `agent-bus topics …` as a real subprocess on data made by real agents
 * through the MCP server.
 */

import assert from "node:assert/strict";
import { readRows } from "../_helpers/store.ts";
import { cli } from "../_helpers/cli.ts";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

interface Scene extends AsyncDisposable {
  alice: Peer;
  alphaId: string;
  dbPath: string;
  env: Record<string, string>;
}

/** A temp bus where two agents talk in "alpha"; "old" is closed. Dispose to clean up. */
async function seed(): Promise<Scene> {
  const tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const alice = await startPeer({ dbPath });
  const bob = await startPeer({ dbPath });
  const alphaId = (await alice.ok("topic_create", { name: "alpha" })).topic_id as string;
  await alice.ok("topic_join", { agent_name: "alice", topic_id: alphaId });
  await bob.ok("topic_join", { agent_name: "bob", topic_id: alphaId });
  await alice.ok("sync", {
    topic_id: alphaId,
    outbox: [{ content_markdown: "the alpha plan" }, {
      content_markdown: "second",
      message_type: "question",
    }],
    wait_seconds: 0,
  });
  await bob.ok("sync", {
    topic_id: alphaId,
    outbox: [{ content_markdown: "reply from bob" }],
    wait_seconds: 0,
  });
  const oldId = (await alice.ok("topic_create", { name: "old" })).topic_id as string;
  await alice.ok("topic_close", { topic_id: oldId, reason: "finished" });
  return {
    alice,
    alphaId,
    dbPath,
    env: { AGENT_BUS_DB: dbPath },
    async [Symbol.asyncDispose]() {
      await alice[Symbol.asyncDispose]();
      await bob[Symbol.asyncDispose]();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

Deno.test("topics list shows counts, last activity and presence, as a table or JSON", async () => {
  await using scene = await seed();
  const { alphaId, env } = scene;
  const json = await cli(["topics", "list", "--json"], env);
  assert.equal(json.code, 0, json.stderr);
  const topics = JSON.parse(json.stdout) as Record<string, unknown>[];
  assert.deepEqual(topics.map((t) => [t.name, t.messages, t.last_seq, t.active_agents]), [[
    "alpha",
    3,
    3,
    2,
  ]]);
  assert.equal(topics[0]!.topic_id, alphaId);
  assert.equal(typeof topics[0]!.last_message_at, "number");

  const all = await cli(["topics", "list", "--status", "all"], env);
  assert.equal(all.code, 0);
  const lines = all.stdout.trim().split("\n");
  assert.match(lines[0]!, /^TOPIC_ID\s+NAME\s+STATUS\s+MESSAGES\s+LAST ACTIVITY\s+PRESENT$/);
  assert.match(all.stdout, new RegExp(`${alphaId}\\s+alpha\\s+open\\s+3\\s+just now\\s+2`));
  assert.match(all.stdout, /old\s+closed\s+0/);
  assert.equal((await cli(["topics", "list", "--status", "bogus"], env)).code, 2);
});

Deno.test("topics show and presence tell who is there and what was said", async () => {
  await using scene = await seed();
  const { alphaId, env } = scene;
  const shown = await cli(["topics", "show", "alpha"], env);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^alpha \\(${alphaId}\\), open`));
  assert.match(shown.stdout, /Present: (alice|bob) \(just now\), (alice|bob)/);
  assert.match(
    shown.stdout,
    /#1 \d\d:\d\d:\d\d alice: the alpha plan\n#2 .* alice \(question\): second\n#3 .* bob: reply from bob/,
  );
  const asJson = JSON.parse((await cli(["topics", "show", alphaId, "--json"], env)).stdout);
  assert.deepEqual(asJson.present.map((p: { agent_name: string }) => p.agent_name).sort(), [
    "alice",
    "bob",
  ]);
  assert.equal(asJson.messages.length, 3);
  const presence = JSON.parse((await cli(["topics", "presence", "alpha", "--json"], env)).stdout);
  assert.equal(presence.count, 2);
  const missing = await cli(["topics", "show", "nope"], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /TOPIC_NOT_FOUND/);
});

Deno.test("topics rename, close and delete change what agents see; rename never touches bodies", async () => {
  await using scene = await seed();
  const { alice, alphaId, dbPath, env } = scene;
  const renamed = await cli(["topics", "rename", "alpha", "beta"], env);
  assert.equal(renamed.code, 0, renamed.stderr);
  assert.match(renamed.stdout, /Renamed "alpha" to "beta"/);
  assert.equal((await alice.ok("topic_resolve", { name: "beta" })).topic_id, alphaId);
  const bodies = (await readRows(dbPath, "SELECT content_markdown FROM messages ORDER BY seq"))
    .map((r) => r.content_markdown);
  assert.deepEqual(bodies, ["the alpha plan", "second", "reply from bob"]);

  assert.equal((await cli(["topics", "close", "beta", "--reason", "done"], env)).code, 0);
  const refused = await alice.fail("sync", {
    topic_id: alphaId,
    outbox: [{ content_markdown: "late" }],
    wait_seconds: 0,
  });
  assert.equal(refused.code, "TOPIC_CLOSED");
  const again = await cli(["topics", "close", "beta"], env);
  assert.match(again.stdout, /already closed/);

  const unconfirmed = await cli(["topics", "delete", "beta"], env);
  assert.equal(unconfirmed.code, 2);
  assert.match(unconfirmed.stderr, /--yes/);
  const deleted = await cli(["topics", "delete", "beta", "--yes", "--json"], env);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.deepEqual(JSON.parse(deleted.stdout).deleted, {
    messages: 3,
    cursors: 2,
    reservations: 2,
    questions: 0,
  });
  assert.equal((await alice.fail("topic_presence", { topic_id: alphaId })).code, "TOPIC_NOT_FOUND");

  const created = await cli(["topics", "create", "fresh"], env);
  assert.match(created.stdout, /Created topic "fresh"/);
  assert.match((await cli(["topics", "create", "fresh"], env)).stdout, /Reused topic "fresh"/);
});
