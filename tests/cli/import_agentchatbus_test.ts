/**
 * `agent-bus db import-agentchatbus FILE` on a database in AgentChatBus's
 * schema (its TS server's tables, made here with a small conversation in
 * them): agents keep their ids and tokens, threads their ids, states,
 * summaries and creators, messages are renumbered per thread and keep their
 * authors, replies, edits and reactions, and everything is searchable at
 * once; a second run adds nothing. The chatbus tools read the result.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { cli } from "../_helpers/cli.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { ALICE, BOB, DESIGN, RELEASE, writeFixture } from "../_helpers/acb_file.ts";

Deno.test("db import-agentchatbus brings an AgentChatBus database onto the bus", async () => {
  await using tmp = await tmpDir();
  const source = `${tmp.path}/agentchatbus.db`;
  writeFixture(source);
  const dbPath = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_DB: dbPath };

  const imported = await cli(["db", "import-agentchatbus", source, "--json"], env);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(JSON.parse(imported.stdout), {
    agents: { found: 2, imported: 2, skipped: 0 },
    templates: { found: 1, imported: 1, skipped: 0 },
    threads: { found: 2, imported: 2, skipped: 0 },
    messages: { found: 4, imported: 4, skipped: 0 },
    edits: 1,
    reactions: 1,
  });

  await using chat = await connectInProcess(dbPath, "chatbus");
  // Agents resume with the tokens they had.
  const alice = await chat.ok("agent_resume", { agent_id: ALICE, token: "alice-token" });
  assert.equal(alice.display_name, "Alice");
  assert.deepEqual(alice.capabilities, ["review"]);
  assert.equal(
    (await chat.fail("agent_resume", { agent_id: BOB, token: "wrong" })).code,
    "AUTHENTICATION_REQUIRED",
  );

  const design = await chat.ok("thread_get", { thread_id: DESIGN });
  assert.deepEqual(
    [
      design.topic,
      design.status,
      design.template_id,
      design.creator_admin_id,
      design.system_prompt,
    ],
    ["API design", "review", "custom-rfc", ALICE, "Talk API only."],
  );
  assert.deepEqual(design.metadata, { ticket: "API-7" });
  const release = await chat.ok("thread_get", { thread_id: RELEASE });
  assert.deepEqual([release.status, release.summary], ["closed", "Shipped on Friday"]);

  // Renumbered per thread, in order, with authors, roles, priorities and replies.
  const listed = await chat.call("msg_list", {
    thread_id: DESIGN,
    return_format: "json",
    include_system_prompt: false,
  });
  const messages = JSON.parse((listed.content as { text: string }[])[0]!.text) as Record<
    string,
    unknown
  >[];
  assert.deepEqual(
    messages.map((m) => [m.seq, m.msg_id, m.author_id, m.role, m.content, m.reply_to_msg_id]),
    [
      [1, "m1", ALICE, "user", "Should pagination use cursors?", null],
      [2, "m3", BOB, "assistant", "Yes: opaque cursors", "m1"],
    ],
  );
  assert.equal(messages[0]!.edit_version, 1);
  assert.deepEqual((messages[1]!.reactions as { reaction: string }[]).map((r) => r.reaction), [
    "agree",
  ]);
  const history = await chat.ok("msg_edit_history", { message_id: "m1" });
  assert.deepEqual(
    (history.edits as { old_content: string }[]).map((e) => e.old_content),
    ["Should pagination use offsets?"],
  );
  const got = await chat.ok("msg_get", { message_id: "m2" });
  assert.equal((got.message as { priority: string }).priority, "urgent");
  assert.equal((await chat.ok("template_get", { template_id: "custom-rfc" })).name, "RFC");

  // Searchable at once, and the thread takes new posts after its last seq.
  const found = await chat.call("msg_search", { query: "opaque cursors" });
  assert.match(JSON.stringify(found.content), /m3/);
  const sync = await chat.ok("bus_connect", {
    thread_name: "API design",
    agent_id: ALICE,
    token: "alice-token",
  });
  const posted = await chat.ok("msg_post", {
    thread_id: DESIGN,
    author: ALICE,
    content: "Agreed.",
    expected_last_seq: sync.current_seq,
    reply_token: sync.reply_token,
  });
  assert.equal(posted.seq, 3);

  // A second run keeps what is there and adds nothing.
  const again = await cli(["db", "import-agentchatbus", source, "--json"], env);
  assert.equal(again.code, 0, again.stderr);
  const report = JSON.parse(again.stdout);
  assert.deepEqual(report.threads, { found: 2, imported: 0, skipped: 2 });
  assert.deepEqual(report.agents, { found: 2, imported: 0, skipped: 2 });

  const other = `${tmp.path}/other.sqlite`;
  const notes = new DatabaseSync(other);
  notes.exec("CREATE TABLE notes (body TEXT)");
  notes.close();
  const notOurs = await cli(["db", "import-agentchatbus", other], env);
  assert.equal(notOurs.code, 2, "a wrong argument");
  assert.match(notOurs.stderr, /not an AgentChatBus database/);
});
