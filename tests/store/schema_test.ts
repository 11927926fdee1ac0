/**
 * Tests that the store's schema is the seed's, that foreign databases are
 * refused without being touched, and that many processes can open one cold
 * database at once.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { createLogger } from "../../lib/log.ts";
import { openStore, wipeDatabase } from "../../lib/store/mod.ts";
import { EXT_VERSION } from "../../lib/store/schema.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const log = createLogger("error");

function columns(db: DatabaseSync, table: string) {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as {
    name: string;
    type: string;
    notnull: number;
    pk: number;
  }[]).map((c) => `${c.name} ${c.type}${c.notnull ? " NOT NULL" : ""}${c.pk ? ` PK${c.pk}` : ""}`);
}

function indexColumns(db: DatabaseSync, index: string): string[] {
  return (db.prepare(`PRAGMA index_info(${index})`).all() as { name: string }[]).map((c) => c.name);
}

Deno.test("openStore() creates the seed's tables, columns and indexes exactly", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/nested/dir/bus.sqlite`;
  const store = openStore(path, { busyTimeoutMs: 1000, log });
  assert.equal(store.check(), undefined);
  store.close();
  const db = new DatabaseSync(path);
  assert.equal(
    (db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode,
    "wal",
  );
  assert.deepEqual(columns(db, "meta"), ["key TEXT PK1", "value TEXT"]);
  assert.deepEqual(columns(db, "topics"), [
    "topic_id TEXT PK1",
    "name TEXT NOT NULL",
    "created_at REAL NOT NULL",
    "status TEXT NOT NULL",
    "closed_at REAL",
    "close_reason TEXT",
    "metadata_json TEXT",
  ]);
  assert.deepEqual(columns(db, "topic_seq"), [
    "topic_id TEXT PK1",
    "next_seq INTEGER NOT NULL",
    "updated_at REAL NOT NULL",
  ]);
  assert.deepEqual(columns(db, "messages"), [
    "message_id TEXT PK1",
    "topic_id TEXT NOT NULL",
    "seq INTEGER NOT NULL",
    "sender TEXT NOT NULL",
    "message_type TEXT NOT NULL",
    "reply_to TEXT",
    "content_markdown TEXT NOT NULL",
    "metadata_json TEXT",
    "client_message_id TEXT",
    "created_at REAL NOT NULL",
  ]);
  assert.deepEqual(columns(db, "cursors"), [
    "topic_id TEXT NOT NULL PK1",
    "agent_name TEXT NOT NULL PK2",
    "last_seq INTEGER NOT NULL",
    "updated_at REAL NOT NULL",
  ]);
  assert.deepEqual(columns(db, "agent_name_reservations"), [
    "topic_id TEXT NOT NULL PK1",
    "agent_name TEXT NOT NULL PK2",
    "reclaim_token TEXT NOT NULL",
    "created_at REAL NOT NULL",
    "last_claimed_at REAL NOT NULL",
  ]);
  assert.deepEqual(indexColumns(db, "idx_topics_name_status_created_at"), [
    "name",
    "status",
    "created_at",
  ]);
  assert.deepEqual(indexColumns(db, "idx_messages_topic_seq"), ["topic_id", "seq"]);
  assert.deepEqual(indexColumns(db, "idx_messages_topic_reply_to"), ["topic_id", "reply_to"]);
  const uniques = (db.prepare("PRAGMA index_list(messages)").all() as {
    name: string;
    unique: number;
    partial: number;
  }[]).filter((i) => i.unique);
  const uniqueColumns = uniques.map((i) => [indexColumns(db, i.name).join(","), i.partial]).sort();
  assert.deepEqual(uniqueColumns, [
    ["message_id", 0],
    ["topic_id,sender,client_message_id", 1],
    ["topic_id,seq", 0],
  ]);
  const meta = Object.fromEntries(
    (db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[])
      .map((r) => [r.key, r.value]),
  );
  assert.equal(meta.schema_version, "6");
  assert.equal(meta.bus_ext_version, String(EXT_VERSION));
  db.close();
});

Deno.test("openStore() reports DB_SCHEMA_MISMATCH for another schema and leaves it alone", async () => {
  await using tmp = await tmpDir();
  for (
    const [setup, detail] of [
      [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema_version', '5');",
        /"5"/,
      ],
      ["CREATE TABLE something_else (x);", /no meta table/],
      ["CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);", /no schema_version/],
    ] as const
  ) {
    const path = `${tmp.path}/${crypto.randomUUID()}.sqlite`;
    const raw = new DatabaseSync(path);
    raw.exec(setup);
    raw.close();
    const store = openStore(path, { busyTimeoutMs: 1000, log });
    const failure = store.check();
    assert.equal(failure?.code, "DB_SCHEMA_MISMATCH");
    assert.match(failure!.message, detail);
    assert.match(failure!.message, /agent-bus db wipe --yes/);
    assert.throws(() => store.read(() => 1), (e: unknown) => e === failure);
    store.close();
    const check = new DatabaseSync(path);
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE name = 'topics'").all();
    assert.equal(tables.length, 0, "nothing was created in a foreign database");
    check.close();
  }
});

Deno.test("openStore() refuses a file that is not SQLite with DB_SCHEMA_MISMATCH", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/garbage.sqlite`;
  await Deno.writeTextFile(path, "this is not a database, ".repeat(100));
  const store = openStore(path, { busyTimeoutMs: 500, log });
  assert.equal(store.check()?.code, "DB_SCHEMA_MISMATCH");
  assert.equal(await Deno.readTextFile(path), "this is not a database, ".repeat(100));
});

Deno.test("openStore() opens a database made by the original implementation in place", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/original.sqlite`;
  const raw = new DatabaseSync(path);
  raw.exec(await Deno.readTextFile(new URL("../fixtures/original_v6.sql", import.meta.url)));
  raw.close();
  const store = openStore(path, { busyTimeoutMs: 1000, log });
  assert.equal(store.check(), undefined);
  const indexed = store.read(() =>
    store.stmt("SELECT message_id FROM bus_fts WHERE bus_fts MATCH 'zeppelin' ORDER BY rank").all()
  );
  assert.equal(indexed.length, 2, "existing messages were backfilled into our index");
  store.close();
  const check = new DatabaseSync(path);
  assert.equal(
    (check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as {
      value: string;
    }).value,
    "6",
  );
  assert.equal(
    check.prepare("SELECT * FROM messages_fts").all().length,
    2,
    "their index is untouched",
  );
  check.close();
});

Deno.test("openStore() is safe when many processes open one cold database at once", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/cold.sqlite`;
  const script = `
    import { openStore } from ${
    JSON.stringify(new URL("../../lib/store/mod.ts", import.meta.url).href)
  };
    import { createLogger } from ${
    JSON.stringify(new URL("../../lib/log.ts", import.meta.url).href)
  };
    const startAt = Number(Deno.args[0]);
    while (Date.now() < startAt) await new Promise((r) => setTimeout(r, 1));
    const store = openStore(${
    JSON.stringify(path)
  }, { busyTimeoutMs: 10000, log: createLogger("error") });
    const failure = store.check(); if (failure) { console.error(failure.message); Deno.exit(1); }
    await store.immediate(() => store.stmt("INSERT INTO meta (key, value) VALUES (?, 'x')").run(crypto.randomUUID()));
    store.close();
  `;
  const file = `${tmp.path}/open.ts`;
  await Deno.writeTextFile(file, script);
  const startAt = Date.now() + 1500;
  const children = Array.from({ length: 8 }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", file, String(startAt)],
      stdout: "piped",
      stderr: "piped",
    }).output());
  const results = await Promise.all(children);
  for (const result of results) {
    assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  }
  const db = new DatabaseSync(path);
  assert.equal(
    (db.prepare("SELECT COUNT(*) AS n FROM meta WHERE value = 'x'").get() as { n: number }).n,
    8,
  );
  db.close();
});

Deno.test("wipeDatabase() removes the file, its WAL companions and its lock file", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  const store = openStore(path, { busyTimeoutMs: 1000, log });
  await store.immediate(() => store.stmt("INSERT INTO meta VALUES ('k', 'v')").run());
  const keep = new DatabaseSync(path); // keeps -wal and -shm in place
  keep.prepare("SELECT 1").get();
  const removed = wipeDatabase(path, { busyTimeoutMs: 1000, log });
  assert.ok(removed.includes(path));
  assert.ok(removed.includes(`${path}-wal`));
  assert.ok(removed.includes(`${path}-lock`), "the writers' line file goes too");
  for (const suffix of ["", "-wal", "-shm", "-lock"]) {
    await assert.rejects(Deno.stat(`${path}${suffix}`), Deno.errors.NotFound);
  }
  keep.close();
  store.close();
  assert.deepEqual(wipeDatabase(path, { busyTimeoutMs: 1000, log }), []);
});
