/**
 * Full-text search through the search engine, in process: stemming,
 * code identifiers by their parts, filters, and hostile queries.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { BusError } from "../../lib/errors.ts";
import type { SearchArgs, SearchEngine } from "../../lib/search/mod.ts";
import { openTestBus, openTestSearch, seedTopic } from "../_helpers/bus.ts";
import { execSql, sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

function fts(engine: SearchEngine, more: Partial<SearchArgs>) {
  return engine.search({ query: "", mode: "fts", limit: 20, includeContent: false, ...more });
}

Deno.test("search finds words with stemming and marks hits", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using engine = openTestSearch(bus);
  await seedTopic(bus, "alpha", [
    "The migration script is running slowly",
    "Unrelated note about lunch",
    "We ran the migrations yesterday",
  ]);
  const result = await fts(engine, { query: "migrations" });
  assert.equal(result.count, 2, "stemming matches migration and migrations");
  assert.ok(result.results.every((r) => r.snippet.includes("«") && r.snippet.includes("»")));
  assert.equal(result.results[0]!.topic_name, "alpha");
  assert.equal(typeof result.results[0]!.rank, "number");
  assert.equal(result.results[0]!.content_markdown, undefined);
  assert.equal(
    (await fts(engine, { query: "migration run" })).count,
    1,
    "every word must match first",
  );
  const full = await fts(engine, { query: "lunch", includeContent: true });
  assert.equal(full.results[0]!.content_markdown, "Unrelated note about lunch");
});

Deno.test("search falls back to any word, and skips common words in a question", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using engine = openTestSearch(bus);
  await seedTopic(bus, "t", [
    "apples and pears",
    "apples only",
    "nothing here",
    "Fix the flaky build",
  ]);
  const any = await fts(engine, { query: "apples pears bananas" });
  assert.deepEqual(any.results.map((r) => r.snippet.replaceAll(/[«»]/g, "")), [
    "apples and pears",
    "apples only",
  ]);
  const question = await fts(engine, { query: "how do we fix the build?" });
  assert.equal(question.count, 1);
  assert.match(question.results[0]!.snippet, /«Fix» the flaky «build»/);
});

Deno.test("search finds code by its parts: camelCase, snake_case, paths, dotted names, versions", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using engine = openTestSearch(bus);
  await seedTopic(bus, "code", [
    "Call getUserName() before parseHTTPResponse in the handler",
    "The load_config helper reads settings.toml",
    "See src/store/cursor_sync.ts for details",
    "Use bus.changes.notify after commits",
    "Upgraded sqlite to v3.53.2 last week",
    "Plain prose without code at all",
  ]);
  const cases: [string, RegExp][] = [
    ["user name", /getUserName/],
    ["userName", /getUserName/],
    ["getUserName", /getUserName/],
    ["http response", /parseHTTPResponse/],
    ["config", /load_config/],
    ["load_config", /load_config/],
    ["cursor sync", /cursor_sync/],
    ["src/store", /src\/store/],
    ["changes notify", /bus\.changes\.notify/],
    ["bus.changes", /bus\.changes\.notify/],
    ["3.53.2", /v3\.53\.2/],
    ["v3.53.2", /v3\.53\.2/],
  ];
  for (const [query, pattern] of cases) {
    const result = await fts(engine, { query, includeContent: true });
    assert.ok(result.count >= 1, `"${query}" finds something`);
    assert.match(result.results[0]!.content_markdown!, pattern, `"${query}" finds ${pattern}`);
    assert.match(result.results[0]!.snippet, /«.+»/, `"${query}" is marked in the snippet`);
  }
});

Deno.test("search filters by topic, sender, message type and time, and honours limit", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using bus = openTestBus(path);
  await using engine = openTestSearch(bus);
  const one = await seedTopic(bus, "one", [
    "shared word",
    { content_markdown: "shared question?", message_type: "question" },
  ], "alice");
  await seedTopic(bus, "two", ["shared too"], "bob");
  await execSql(
    path,
    "UPDATE messages SET created_at = 1000 WHERE content_markdown = 'shared word'",
  );
  assert.equal((await fts(engine, { query: "shared" })).count, 3);
  assert.equal((await fts(engine, { query: "shared", topicId: one })).count, 2);
  assert.equal((await fts(engine, { query: "shared", sender: "bob" })).count, 1);
  assert.equal((await fts(engine, { query: "shared", messageType: "question" })).count, 1);
  assert.equal((await fts(engine, { query: "shared", until: 2000 })).count, 1);
  assert.equal((await fts(engine, { query: "shared", since: 2000 })).count, 2);
  assert.equal((await fts(engine, { query: "shared", limit: 1 })).count, 1);
  assert.equal((await fts(engine, { query: "shared", topicId: "unknown" })).count, 0);
  await assert.rejects(
    fts(engine, { query: "shared", since: 5, until: 1 }),
    (e: unknown) => e instanceof BusError && e.code === "INVALID_ARGUMENT",
  );
});

Deno.test("search never fails on hostile queries, only on a blank one", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using engine = openTestSearch(bus);
  await seedTopic(bus, "t", ["foo-bar (baz) NOT near"]);
  const hostile = [
    '"',
    "(",
    "NOT",
    "foo-bar",
    "x".repeat(10000),
    "🚀",
    "' OR 1=1 --",
    "*",
    "AND OR NOT",
    "SELECT * FROM messages; --",
    "a\u0000b",
    "\u0000",
    "foo\u0000",
    "\u0001\u007f\u001b[31m",
  ];
  for (const mode of ["fts", "hybrid", "semantic"] as const) {
    for (const query of hostile) {
      await fts(engine, { query, mode }); // must not throw
    }
  }
  assert.equal((await fts(engine, { query: "foo-bar" })).count, 1);
  assert.equal((await fts(engine, { query: "NOT" })).count, 1);
  assert.equal((await fts(engine, { query: "baz\u0000near" })).count, 1, "a NUL separates words");
  for (const query of ["   ", "\n\t"]) {
    await assert.rejects(
      fts(engine, { query }),
      (e: unknown) => e instanceof BusError && e.code === "INVALID_ARGUMENT",
    );
  }
});

sqliteTest(
  "messages inserted by another program are found whole, code terms too, before and after the indexer writes them",
  "the original program writing the same file; no other program writes a PostgreSQL bus",
  async () => {
    await using tmp = await tmpDir();
    const path = `${tmp.path}/bus.sqlite`;
    await using bus = openTestBus(path);
    await using engine = openTestSearch(bus, { AGENT_BUS_EMBEDDINGS_AUTOINDEX: "0" });
    const topicId = await seedTopic(bus, "t", ["first"]);
    const raw = new DatabaseSync(path);
    raw.prepare(
      `INSERT INTO messages (message_id, topic_id, seq, sender, message_type, content_markdown, created_at)
     VALUES ('foreign1', ?, 2, 'other', 'message', 'they call fetchRemoteConfig here', 1)`,
    ).run(topicId);
    raw.close();
    assert.equal((await fts(engine, { query: "fetchRemoteConfig" })).count, 1);
    assert.equal((await fts(engine, { query: "remote config" })).count, 1, "its parts at once");
    assert.equal(
      await engine.indexer.runOnce(),
      true,
      "the search wrote nothing: the indexer does",
    );
    assert.equal((await fts(engine, { query: "remote config" })).count, 1, "indexed, found once");
    assert.equal(await engine.indexer.runOnce(), false, "nothing left to do");
  },
);

sqliteTest(
  "a sent message waits for its index row outside the send, and the indexer writes it",
  "PostgreSQL writes the index row in the send's transaction",
  async () => {
    await using tmp = await tmpDir();
    const path = `${tmp.path}/bus.sqlite`;
    await using bus = openTestBus(path);
    await using engine = openTestSearch(bus, { AGENT_BUS_EMBEDDINGS_AUTOINDEX: "0" });
    await seedTopic(bus, "t", ["the zeppelin uses parseHttpHeader"]);
    const indexed = () =>
      bus.store.read(() =>
        bus.store.stmt("SELECT COUNT(*) AS n FROM bus_fts").get() as { n: number }
      ).n;
    assert.equal(indexed(), 0, "the send wrote no index row");
    assert.equal(await engine.indexer.runOnce(), true);
    assert.equal(indexed(), 1);
    assert.equal((await fts(engine, { query: "http header" })).count, 1, "code terms included");
    assert.equal(await engine.indexer.runOnce(), false, "nothing left to do");
    const raw = new DatabaseSync(path);
    raw.exec("UPDATE messages SET content_markdown = 'the airship now'");
    assert.equal((await fts(engine, { query: "zeppelin" })).count, 0, "an edit drops the old row");
    assert.equal((await fts(engine, { query: "airship" })).count, 1, "and indexes the new body");
    raw.exec("UPDATE messages SET content_markdown = 'a blimp'");
    raw.exec("DELETE FROM messages");
    raw.close();
    assert.equal(await engine.indexer.runOnce(), false, "a deleted message leaves no queue row");
    assert.equal((await fts(engine, { query: "blimp" })).count, 0);
  },
);

sqliteTest(
  "one process writes the full-text rows in the background; another's search still sees all",
  "PostgreSQL writes the index row in the send's transaction",
  async () => {
    await using tmp = await tmpDir();
    const path = `${tmp.path}/bus.sqlite`;
    await using busA = openTestBus(path);
    await using busB = openTestBus(path);
    await using engineA = openTestSearch(busA, { AGENT_BUS_EMBEDDINGS_AUTOINDEX: "0" });
    await using engineB = openTestSearch(busB, { AGENT_BUS_EMBEDDINGS_AUTOINDEX: "0" });
    await seedTopic(busA, "t", ["first zeppelin"]);
    assert.equal(await engineA.indexer.runOnce(), true, "A takes the full-text lease and indexes");
    await seedTopic(busB, "u", ["second zeppelin"]);
    assert.equal(await engineB.indexer.runOnce(), false, "B leaves the rows to A");
    assert.equal((await fts(engineB, { query: "zeppelin" })).count, 2, "B's search sees the queue");
    await seedTopic(busB, "v", ["third zeppelin"]);
    assert.equal(await engineA.indexer.runOnce(), true);
    assert.equal((await fts(engineA, { query: "zeppelin" })).count, 3);
  },
);

Deno.test("a query of stop words only is ranked among its newest matches", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using engine = openTestSearch(bus);
  // 5,100 messages with "the": the oldest 100 fall outside the 5,000 newest matches ranked.
  for (let first = 0; first < 5100; first += 50) {
    await seedTopic(bus, "chatter", Array.from({ length: 50 }, (_, i) => `the note ${first + i}`));
  }
  const result = await fts(engine, { query: "the", includeContent: true });
  assert.equal(result.count, 20);
  for (const hit of result.results) {
    assert.ok(Number(hit.content_markdown!.split(" ")[2]) >= 100, hit.content_markdown);
  }
  // A query with a meaningful word still ranks every match.
  await seedTopic(bus, "chatter", ["the note about the oldest thing"]);
  assert.equal((await fts(engine, { query: "the oldest" })).count, 1);
});
