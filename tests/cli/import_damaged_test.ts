/**
 * `agent-bus db import-agentchatbus` on damaged and hostile files: each is
 * refused whole, naming the row (or saying the file is not one it reads),
 * nothing of it enters the bus, and a second run says the same — never a
 * half import reported as a success. An import killed halfway is finished
 * by running it again, and its count covers every thread.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ALICE, RELEASE, SCHEMA, writeFixture } from "../_helpers/acb_file.ts";
import { cli, spawnCli } from "../_helpers/cli.ts";
import { until } from "../_helpers/peer.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** AgentChatBus's schema without its keys and constraints, as a damaged or hand-made file has it. */
const LOOSE_SCHEMA = SCHEMA.replaceAll(" PRIMARY KEY", "").replaceAll(" NOT NULL", "")
  .replace(/,\s*UNIQUE \(message_id, agent_id, reaction\)/, "");

/** A JSON object nested `depth` levels deep, as text (never built as a value). */
const deepJson = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** A fixture file, then `sql` run on it (the damage). */
function damaged(path: string, sql: string, schema = LOOSE_SCHEMA): void {
  const db = new DatabaseSync(path);
  db.exec(schema);
  db.close();
  writeRows(path);
  const damage = new DatabaseSync(path);
  damage.exec(sql);
  damage.close();
}

/** The fixture's rows (into a file whose tables exist). */
function writeRows(path: string): void {
  const scratch = `${path}.rows`;
  writeFixture(scratch);
  const db = new DatabaseSync(path);
  db.exec(`ATTACH '${scratch}' AS f`);
  for (
    const table of [
      "threads",
      "messages",
      "agents",
      "thread_settings",
      "message_edits",
      "reactions",
      "templates",
    ]
  ) {
    db.exec(`INSERT INTO main.${table} SELECT * FROM f.${table}`);
  }
  db.exec("DETACH f");
  db.close();
  Deno.removeSync(scratch);
}

const MESSAGE = `INSERT INTO messages (id, thread_id, seq, priority, author, author_id, role,
  content, metadata, reply_to_msg_id, created_at, edited_at, edit_version)`;

/** Each damage, and what the refusal must say. */
const CASES: readonly [name: string, sql: string, expected: RegExp][] = [
  [
    "a message id repeated in another thread",
    `${MESSAGE} VALUES ('m1', '${RELEASE}', 9, 'normal', 'bob', NULL, 'user', 'again', NULL, NULL,
      '2026-03-01T11:00:00Z', NULL, 0)`,
    /messages row "m1": its id is used by 2 messages/,
  ],
  [
    "a thread with a NULL id",
    `INSERT INTO threads (id, topic, status, created_at, updated_at) VALUES (NULL, 'ghost',
      'discuss', '2026-03-01T11:00:00Z', '2026-03-01T11:00:00Z')`,
    /threads row with a NULL id: its id is NULL/,
  ],
  [
    "a thread with a NULL topic",
    `UPDATE threads SET topic = NULL WHERE id = '${RELEASE}'`,
    /threads row "5d1c9a40-bbbb[^"]*": its topic is NULL/,
  ],
  [
    "a thread id of 5,000 characters",
    `UPDATE threads SET id = '${"t".repeat(5000)}' WHERE id = '${RELEASE}';
     UPDATE messages SET thread_id = '${"t".repeat(5000)}' WHERE thread_id = '${RELEASE}'`,
    /threads row "t{80}…": its id has 5000 characters; the most is 64/,
  ],
  [
    "an empty message id",
    `UPDATE messages SET id = '' WHERE id = 'm2'`,
    /messages row "": its id is empty/,
  ],
  [
    "metadata 200,000 levels deep",
    `UPDATE messages SET metadata = '${deepJson(200_000)}' WHERE id = 'm3'`,
    /messages row "m3": its metadata (nests deeper than 32 levels|is \d+ characters of JSON)/,
  ],
  [
    "metadata deeper than the bus takes",
    `UPDATE messages SET metadata = '${deepJson(40)}' WHERE id = 'm3'`,
    /messages row "m3": its metadata nests deeper than 32 levels/,
  ],
  [
    "metadata that is not an object",
    `UPDATE messages SET metadata = '[1, 2]' WHERE id = 'm3'`,
    /messages row "m3": its metadata is not a JSON object/,
  ],
  [
    "a message whose thread is missing",
    `${MESSAGE} VALUES ('m9', 'no-such-thread', 9, 'normal', 'bob', NULL, 'user', 'lost', NULL,
      NULL, '2026-03-01T11:00:00Z', NULL, 0)`,
    /messages row "m9": its thread is not in the file/,
  ],
  [
    "a message with a NULL thread",
    `${MESSAGE} VALUES ('m9', NULL, 9, 'normal', 'bob', NULL, 'user', 'lost', NULL, NULL,
      '2026-03-01T11:00:00Z', NULL, 0)`,
    /messages row "m9": its thread is not in the file/,
  ],
  [
    "content that is not text",
    `UPDATE messages SET content = x'00ff' WHERE id = 'm4'`,
    /messages row "m4": its content is not text/,
  ],
  [
    "a role the bus does not know",
    `UPDATE messages SET role = 'root' WHERE id = 'm4'`,
    /messages row "m4": its role "root" is not one of user, assistant, system/,
  ],
  [
    "a message with a NULL seq",
    `UPDATE messages SET seq = NULL WHERE id = 'm4'`,
    /messages row "m4": its seq is not a number/,
  ],
  [
    "an edit version twice",
    `INSERT INTO message_edits (message_id, version, old_content, edited_by, created_at)
     VALUES ('m1', 1, 'dup', 'x', '2026-03-01T11:00:00Z')`,
    /message_edits row "m1": a version of this message's edits is there twice/,
  ],
  [
    "an agent without a token",
    `UPDATE agents SET token = NULL WHERE id = '${ALICE}'`,
    /agents row "0b7f2d2e-1111[^"]*": its token is NULL/,
  ],
  [
    "a credential in a message",
    `UPDATE messages SET content = 'use ${"gh" + "p_" + "x7Kq9ZrT2mWp4LbN8vYc3HdJ6sFg1QeR5uAo"}'
     WHERE id = 'm4'`,
    /messages row "m4": content at line 1, column 5 holds a GitHub token \(github-token\)/,
  ],
];

/** What the bus holds: topics, messages and agents. */
async function busContents(dbPath: string) {
  const stats = JSON.parse((await cli(["db", "stats", "--json"], { AGENT_BUS_DB: dbPath })).stdout);
  await using chat = await connectInProcess(dbPath, "chatbus");
  const agents = await chat.ok("agent_list", {});
  return {
    topics: stats.topics.open + stats.topics.closed,
    messages: stats.messages,
    agents: (agents.agents as unknown[]).length,
  };
}

Deno.test("a damaged AgentChatBus file is refused whole, naming the row, on every run", async () => {
  for (const [name, sql, expected] of CASES) {
    await using tmp = await tmpDir();
    const source = `${tmp.path}/agentchatbus.db`;
    damaged(source, sql);
    const env = { AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
    for (const run of [1, 2]) {
      const result = await cli(["db", "import-agentchatbus", source], env);
      assert.equal(result.code, 2, `${name}, run ${run}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, /Nothing was imported/, `${name}, run ${run}`);
      assert.match(result.stderr, expected, `${name}, run ${run}: ${result.stderr}`);
      assert.deepEqual(
        await busContents(env.AGENT_BUS_DB),
        { topics: 0, messages: 0, agents: 0 },
        name,
      );
    }
  }
});

Deno.test("what is not a regular SQLite file is refused at once: a pipe, a directory, a text file", async () => {
  await using tmp = await tmpDir();
  const env = { AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
  const fifo = `${tmp.path}/pipe.db`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.equal(made.code, 0);
  const text = `${tmp.path}/notes.db`;
  await Deno.writeTextFile(text, "threads and messages, but not a database\n");
  for (
    const [path, expected] of [
      [fifo, /is not a regular file/],
      [tmp.path, /is not a regular file/],
      [text, /is not a SQLite database file/],
    ] as const
  ) {
    for (const run of [1, 2]) {
      const result = await cli(["db", "import-agentchatbus", path], env);
      assert.equal(result.code, 2, `${path}, run ${run}`);
      assert.match(result.stderr, expected);
    }
  }
});

Deno.test("with AGENT_BUS_SECRETS=redact a file holding a credential is imported with it redacted", async () => {
  await using tmp = await tmpDir();
  const source = `${tmp.path}/agentchatbus.db`;
  const token = "gl" + "pat-" + "x7Kq9ZrT2mWp4LbN8vYc";
  damaged(source, `UPDATE messages SET content = 'token ${token} here' WHERE id = 'm4'`, SCHEMA);
  const env = { AGENT_BUS_DB: `${tmp.path}/bus.sqlite`, AGENT_BUS_SECRETS: "redact" };
  const result = await cli(["db", "import-agentchatbus", source], env);
  assert.equal(result.code, 0, result.stderr);
  await using chat = await connectInProcess(env.AGENT_BUS_DB, "chatbus");
  const got = await chat.ok("msg_get", { message_id: "m4" });
  assert.equal((got.message as { content: string }).content, "token [redacted gitlab-token] here");
});

/** A file with `threads` threads of `perThread` messages each. */
function bigFile(path: string, threads: number, perThread: number): void {
  const db = new DatabaseSync(path);
  db.exec(SCHEMA);
  const thread = db.prepare(
    `INSERT INTO threads (id, topic, status, created_at, updated_at) VALUES (?, ?, 'discuss', ?, ?)`,
  );
  const message = db.prepare(
    `${MESSAGE} VALUES (?, ?, ?, 'normal', 'bob', NULL, 'user', ?, NULL, NULL, ?, NULL, 0)`,
  );
  db.exec("BEGIN");
  for (let t = 0; t < threads; t++) {
    const at = new Date(Date.UTC(2026, 2, 1, 0, t)).toISOString();
    thread.run(`thread-${t}`, `Thread ${t}`, at, at);
    for (let m = 0; m < perThread; m++) {
      message.run(`t${t}-m${m}`, `thread-${t}`, t * perThread + m, `message ${m} of ${t}`, at);
    }
  }
  db.exec("COMMIT");
  db.close();
}

Deno.test("an import killed halfway is finished by running it again, and every thread is counted", async () => {
  await using tmp = await tmpDir();
  const source = `${tmp.path}/big.db`;
  bigFile(source, 12, 2_000);
  const env = { AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
  // Killed once some of its messages are in.
  const child = await spawnCli(["db", "import-agentchatbus", source], env);
  await until(async () => (await busContents(env.AGENT_BUS_DB)).messages >= 1000, {
    timeoutMs: 60_000,
    everyMs: 50,
    what: "the first thousand messages",
  });
  child.kill("SIGKILL");
  assert.notEqual((await child.status).code, 0, "the first run was killed");
  const half = await busContents(env.AGENT_BUS_DB);
  assert.ok(half.messages > 0 && half.messages < 24_000, JSON.stringify(half));

  const again = await cli(["db", "import-agentchatbus", source, "--json"], env);
  assert.equal(again.code, 0, again.stderr);
  const report = JSON.parse(again.stdout);
  assert.equal(report.messages.found, 24_000);
  assert.equal(report.messages.imported + report.messages.skipped, 24_000);
  assert.equal(report.messages.skipped, half.messages);
  assert.equal((await busContents(env.AGENT_BUS_DB)).messages, 24_000);
  // A third run finds everything there.
  const third = JSON.parse(
    (await cli(["db", "import-agentchatbus", source, "--json"], env)).stdout,
  );
  assert.deepEqual(third.messages, { found: 24_000, imported: 0, skipped: 24_000 });
  assert.deepEqual(third.threads, { found: 12, imported: 0, skipped: 12 });
  // Each thread is numbered 1…2000 without gaps or repeats.
  await using chat = await connectInProcess(env.AGENT_BUS_DB, "chatbus");
  for (let t = 0; t < 12; t++) {
    const seqs: number[] = [];
    for (let after = 0; after < 2000;) {
      const page = await chat.call("msg_list", {
        thread_id: `thread-${t}`,
        after_seq: after,
        limit: 100,
        return_format: "json",
        include_system_prompt: false,
      });
      const listed = JSON.parse((page.content as { text: string }[])[0]!.text) as { seq: number }[];
      if (listed.length === 0) break;
      seqs.push(...listed.map((m) => m.seq));
      after = listed.at(-1)!.seq;
    }
    assert.deepEqual(seqs, Array.from({ length: 2000 }, (_, i) => i + 1), `thread-${t}`);
  }
});
