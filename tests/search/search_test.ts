/**
 * Tests of `searchMessages()` on a real database, in process.
 */

import assert from "node:assert/strict";
import { BusError } from "../../lib/errors.ts";
import { joinTopic } from "../../lib/bus/names.ts";
import { Session } from "../../lib/bus/session.ts";
import { sync } from "../../lib/bus/sync.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { type SearchArgs, searchMessages } from "../../lib/search/mod.ts";
import { openTestBus, type TestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

async function seed(bus: TestBus, name: string, bodies: string[]) {
  const { topic } = await createTopic(bus, { name, mode: "new" });
  const session = new Session();
  await joinTopic(bus, session, {
    agentName: "writer",
    topicId: topic.topic_id,
    allowClosed: false,
  });
  await sync(bus, session.require(topic.topic_id), {
    topicId: topic.topic_id,
    outbox: bodies.map((content_markdown) => ({ content_markdown })),
    maxItems: 1,
    includeSelf: false,
    waitSeconds: 0,
    autoAdvance: true,
  });
  return topic.topic_id;
}

function search(bus: TestBus, more: Partial<SearchArgs>) {
  return searchMessages(bus.store, {
    query: "",
    mode: "fts",
    limit: 20,
    includeContent: false,
    ...more,
  });
}

Deno.test("searchMessages() finds words with stemming and marks hits", async () => {
  await using tmp = await tmpDir();
  using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await seed(bus, "alpha", [
    "The migration script is running slowly",
    "Unrelated note about lunch",
    "We ran the migrations yesterday",
  ]);
  const result = search(bus, { query: "migrations" });
  assert.equal(result.count, 2, "stemming matches migration and migrations");
  assert.equal(search(bus, { query: "migration run" }).count, 1, "every word must match first");
  assert.ok(result.results.every((r) => r.snippet.includes("«") && r.snippet.includes("»")));
  assert.equal(result.results[0]!.topic_name, "alpha");
  assert.equal(typeof result.results[0]!.rank, "number");
  assert.equal(result.results[0]!.content_markdown, undefined);
  const full = search(bus, { query: "lunch", includeContent: true });
  assert.equal(full.results[0]!.content_markdown, "Unrelated note about lunch");
});

Deno.test("searchMessages() falls back to any word when no message has all", async () => {
  await using tmp = await tmpDir();
  using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await seed(bus, "t", ["apples and pears", "apples only", "nothing here"]);
  const result = search(bus, { query: "apples pears bananas" });
  assert.deepEqual(result.results.map((r) => r.snippet.replaceAll(/[«»]/g, "")), [
    "apples and pears",
    "apples only",
  ]);
});

Deno.test("searchMessages() filters by topic and honours limit", async () => {
  await using tmp = await tmpDir();
  using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const one = await seed(bus, "one", ["shared word", "shared again"]);
  await seed(bus, "two", ["shared too"]);
  assert.equal(search(bus, { query: "shared" }).count, 3);
  assert.equal(search(bus, { query: "shared", topicId: one }).count, 2);
  assert.equal(search(bus, { query: "shared", limit: 1 }).count, 1);
  assert.equal(search(bus, { query: "shared", topicId: "unknown" }).count, 0);
});

Deno.test("searchMessages() in hybrid and semantic mode warns and returns text hits", async () => {
  await using tmp = await tmpDir();
  using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await seed(bus, "t", ["vector search someday"]);
  for (const mode of ["hybrid", "semantic"] as const) {
    const result = search(bus, { query: "vector", mode });
    assert.equal(result.count, 1);
    assert.equal(result.warnings[0]?.code, "semantic_unavailable");
    assert.equal(typeof result.results[0]!.fts_rank, "number");
    assert.equal(result.results[0]!.semantic_score, null);
  }
});

Deno.test("searchMessages() never fails on hostile queries, only on a blank one", async () => {
  await using tmp = await tmpDir();
  using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await seed(bus, "t", ["foo-bar (baz) NOT near"]);
  for (const query of ['"', "(", "NOT", "foo-bar", "x".repeat(10000), "🚀", "' OR 1=1 --", "*"]) {
    assert.doesNotThrow(() => search(bus, { query }), query);
  }
  assert.equal(search(bus, { query: "foo-bar" }).count, 1);
  assert.equal(search(bus, { query: "NOT" }).count, 1);
  assert.throws(
    () => search(bus, { query: "   " }),
    (e: unknown) => e instanceof BusError && e.code === "INVALID_ARGUMENT",
  );
});
