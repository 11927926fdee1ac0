/**
 * `agent-bus mail …` and `agent-bus db …` as real subprocesses, against
 * data written by real servers.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { cli } from "../_helpers/cli.ts";
import { startFakeEmbedServer } from "../_helpers/embed_server.ts";
import { startPeer } from "../_helpers/peer.ts";
import { sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("mail send, list and drain share the mailboxes of the peer-bus servers", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_DB: dbPath };
  await using bob = await startPeer({ dbPath, args: ["--profile", "peerbus", "--agent", "bob"] });
  await bob.ok("bus.send", { to: "carol", body: { from: "bob" } });

  const sent = await cli([
    "mail",
    "send",
    "bob",
    "hello bob",
    "--from",
    "alice",
    "--id",
    "m-1",
    "--json",
  ], env);
  assert.equal(sent.code, 0, sent.stderr);
  assert.deepEqual(JSON.parse(sent.stdout), { msg_id: "m-1", duplicate: false });
  assert.match(
    (await cli(["mail", "send", "bob", "hello bob", "--from", "alice", "--id", "m-1"], env)).stdout,
    /Already sent m-1/,
  );
  assert.equal((await cli(["mail", "send", "bob", "-"], env, { stdin: "from stdin" })).code, 0);

  const boxes = JSON.parse((await cli(["mail", "list", "--json"], env)).stdout);
  assert.deepEqual(boxes, [{ agent: "bob", unread: 2, total: 2 }, {
    agent: "carol",
    unread: 1,
    total: 1,
  }]);
  const peek = await cli(["mail", "list", "bob"], env);
  assert.match(
    peek.stdout,
    // (A few seconds may pass between the sends and the listing on a loaded machine.)
    /2 unread for bob:\nm-1 alice (just now|\d+s ago): hello bob\n.* operator (just now|\d+s ago): from stdin/,
  );
  assert.match((await cli(["mail", "peers"], env)).stdout, /^bob$/m);

  const drained = await bob.ok("bus.drain") as {
    messages: { id: string; from: string; source: string; body: unknown }[];
  };
  assert.deepEqual(drained.messages.map((m) => [m.id, m.from, m.source, m.body]).slice(0, 1), [[
    "m-1",
    "alice",
    "cli",
    "hello bob",
  ]]);
  const carol = JSON.parse((await cli(["mail", "drain", "carol", "--json"], env)).stdout);
  assert.deepEqual(carol.map((m: { from: string; content: string }) => [m.from, m.content]), [[
    "bob",
    '{"from":"bob"}',
  ]]);
  assert.match((await cli(["mail", "drain", "carol"], env)).stdout, /No unread mail for carol/);
  assert.equal((await cli(["mail", "send", "no one", "x"], env)).code, 2);
});

sqliteTest(
  "db stats counts what is there; vacuum shrinks a file with free pages",
  "file sizes and SQLite migrations; PostgreSQL's are in tests/store/postgres_store_test.ts",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const env = { AGENT_BUS_DB: dbPath };
    {
      await using peer = await startPeer({ dbPath });
      const topicId = (await peer.ok("topic_create", { name: "big" })).topic_id as string;
      await peer.ok("topic_join", { agent_name: "a", topic_id: topicId });
      for (let i = 0; i < 10; i++) {
        await peer.ok("sync", {
          topic_id: topicId,
          outbox: Array.from({ length: 20 }, () => ({ content_markdown: "x".repeat(2000) })),
          wait_seconds: 0,
        });
      }
      await peer.ok("topic_create", { name: "small" });
    }
    const stats = JSON.parse((await cli(["db", "stats", "--json"], env)).stdout);
    assert.equal(stats.messages, 200);
    assert.deepEqual(stats.topics, { open: 2, closed: 0 });
    assert.equal(stats.sqlite.journal_mode, "wal");
    assert.ok(stats.files.db_bytes > 0);
    assert.equal(stats.semantic_index.backlog, 200);
    assert.match((await cli(["db", "stats"], env)).stdout, /Messages {2}200/);

    assert.equal((await cli(["topics", "delete", "big", "--yes"], env)).code, 0);
    const before = JSON.parse((await cli(["db", "stats", "--json"], env)).stdout);
    const vacuumed = await cli(["db", "vacuum"], env);
    assert.equal(vacuumed.code, 0, vacuumed.stderr);
    assert.match(vacuumed.stdout, /^Vacuumed /);
    const after = JSON.parse((await cli(["db", "stats", "--json"], env)).stdout);
    assert.ok(after.sqlite.page_count < before.sqlite.page_count, "free pages were given back");
    assert.equal(after.sqlite.freelist_count, 0);
    assert.equal(after.files.wal_bytes, 0);
  },
);

sqliteTest(
  "db migrate upgrades an older database of ours in place, keeping its data",
  "file sizes and SQLite migrations; PostgreSQL's are in tests/store/postgres_store_test.ts",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const env = { AGENT_BUS_DB: dbPath };
    {
      await using peer = await startPeer({ dbPath });
      const topicId = (await peer.ok("topic_create", { name: "kept" })).topic_id as string;
      await peer.ok("topic_join", { agent_name: "a", topic_id: topicId });
      await peer.ok("sync", {
        topic_id: topicId,
        outbox: [{ content_markdown: "survives" }],
        wait_seconds: 0,
      });
    }
    // Turn the file into what an agent-bus of migration level 3 left behind.
    const db = new DatabaseSync(dbPath);
    db.exec(`DROP TABLE questions; DROP TABLE bus_mailbox; DROP TABLE bus_peers;
    UPDATE meta SET value = '3' WHERE key = 'bus_ext_version'`);
    db.close();

    const dry = JSON.parse((await cli(["db", "migrate", "--dry-run", "--json"], env)).stdout);
    assert.equal(dry.from, 3);
    assert.deepEqual(dry.pending.map((m: { version: number }) => m.version), [
      4,
      5,
      6,
      7,
      8,
      9,
      10,
      11,
      12,
      13,
    ]);
    const untouched = new DatabaseSync(dbPath, { readOnly: true });
    assert.equal(
      untouched.prepare("SELECT name FROM sqlite_master WHERE name = 'questions'").get(),
      undefined,
    );
    untouched.close();

    const applied = await cli(["db", "migrate"], env);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(
      applied.stdout,
      /Applied 10 migrations.*\n {2}4\. direct mail.*\n {2}5\. teacher\/student.*\n {2}6\. who is waiting.*\n {2}7\. find mail by sender.*\n {2}8\. the AgentChatBus dialect.*\n {2}9\. who each MCP session is.*\n {2}10\. the full-text index.*\n {2}11\. agents that lost a race.*\n {2}12\. what changed besides messages.*\n {2}13\. session records of dead servers expire/,
    );
    assert.match((await cli(["db", "migrate"], env)).stdout, /up to date \(level 13\)/);
    await using peer = await startPeer({ dbPath });
    const found = await peer.ok("messages_search", { query: "survives", mode: "fts" }) as {
      results: unknown[];
    };
    assert.equal(found.results.length, 1, "the old messages are still there and searchable");

    const other = `${tmp.path}/other.sqlite`;
    const foreign = new DatabaseSync(other);
    foreign.exec("CREATE TABLE stuff (x)");
    foreign.close();
    const refused = await cli(["db", "migrate"], { AGENT_BUS_DB: other });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /not ours to migrate/);
  },
);

Deno.test("db reindex embeds the backlog through the endpoint, and says so when there is none", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  {
    await using peer = await startPeer({ dbPath });
    const topicId = (await peer.ok("topic_create", { name: "t" })).topic_id as string;
    await peer.ok("topic_join", { agent_name: "a", topic_id: topicId });
    await peer.ok("sync", {
      topic_id: topicId,
      outbox: Array.from({ length: 30 }, (_, i) => ({ content_markdown: `message number ${i}` })),
      wait_seconds: 0,
    });
  }
  const down = await cli(["db", "reindex"], {
    AGENT_BUS_DB: dbPath,
    AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
  });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /Stopped with 30 messages left/);
  await using embed = startFakeEmbedServer();
  const env = {
    AGENT_BUS_DB: dbPath,
    AGENT_BUS_EMBEDDINGS_URL: embed.url,
    AGENT_BUS_EMBEDDING_MODEL: "test-model",
  };
  const done = await cli(["db", "reindex"], env);
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /Semantic index \(test-model\): 30 indexed, 0 failed, 0 waiting/);
  const stats = JSON.parse((await cli(["db", "stats", "--json"], env)).stdout);
  assert.equal(stats.vectors.chunks, 30);
});
