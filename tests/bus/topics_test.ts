/**
 * Tests of topic creation, listing, resolution and closing, in process.
 */

import assert from "node:assert/strict";
import { BusError } from "../../lib/errors.ts";
import { closeTopic, createTopic, listTopics, resolveTopic } from "../../lib/bus/topics.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

function hasCode(code: string) {
  return (error: unknown) => error instanceof BusError && error.code === code;
}

Deno.test("createTopic() reuses the newest open topic of a name unless mode is new", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const first = await createTopic(bus, { name: "pink", mode: "reuse", metadata: { a: 1 } });
  const again = await createTopic(bus, { name: "  pink ", mode: "reuse", metadata: { b: 2 } });
  assert.equal(again.topic.topic_id, first.topic.topic_id);
  assert.equal(again.reused, true);
  assert.deepEqual(again.topic.metadata, { a: 1 }, "reuse ignores new metadata");
  const fresh = await createTopic(bus, { name: "pink", mode: "new" });
  assert.notEqual(fresh.topic.topic_id, first.topic.topic_id);
  const reused = await createTopic(bus, { name: "pink", mode: "reuse" });
  assert.equal(reused.topic.topic_id, fresh.topic.topic_id, "the newest open one wins");
});

Deno.test("createTopic() names an unnamed topic after its id and rejects bad names", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { mode: "reuse" });
  assert.equal(topic.name, `topic-${topic.topic_id}`);
  assert.match(topic.topic_id, /^[0-9a-f]{12}$/);
  await assert.rejects(createTopic(bus, { name: "  ", mode: "new" }), hasCode("INVALID_ARGUMENT"));
  await assert.rejects(
    createTopic(bus, { name: "a\u0007b", mode: "new" }),
    hasCode("INVALID_ARGUMENT"),
  );
  await assert.rejects(
    createTopic(bus, { name: "x", mode: "new", metadata: { big: "y".repeat(20000) } }),
    hasCode("INVALID_ARGUMENT"),
  );
});

Deno.test("createTopic() in reuse mode makes one topic when many race", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const results = await Promise.all(
    Array.from({ length: 10 }, () => createTopic(bus, { name: "race", mode: "reuse" })),
  );
  assert.equal(new Set(results.map((r) => r.topic.topic_id)).size, 1);
});

Deno.test("listTopics() filters by status, newest first", async () => {
  await using tmp = await tmpDir();
  let clock = 1000;
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const timed = { ...bus, now: () => clock++ };
  const a = await createTopic(timed, { name: "a", mode: "new" });
  const b = await createTopic(timed, { name: "b", mode: "new" });
  await closeTopic(timed, { topicId: a.topic.topic_id });
  const names = (status: "open" | "closed" | "all", limit: number) =>
    listTopics(timed, { status, limit }).topics.map((t) => t.name);
  assert.deepEqual(names("open", 10), ["b"]);
  assert.deepEqual(names("closed", 10), ["a"]);
  assert.deepEqual(names("all", 10), ["b", "a"]);
  const one = listTopics(timed, { status: "all", limit: 1 });
  assert.equal(one.topics.length, 1);
  assert.equal(one.hasMore, true, "more topics than the limit are flagged");
  assert.equal(listTopics(timed, { status: "all", limit: 2 }).hasMore, false);
  assert.equal(b.topic.status, "open");
});

Deno.test("resolveTopic() needs allow_closed for a closed topic", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "done", mode: "new" });
  assert.equal(resolveTopic(bus, { name: "done", allowClosed: false }).topic_id, topic.topic_id);
  await closeTopic(bus, { topicId: topic.topic_id });
  assert.throws(
    () => resolveTopic(bus, { name: "done", allowClosed: false }),
    hasCode("TOPIC_NOT_FOUND"),
  );
  assert.equal(resolveTopic(bus, { name: "done", allowClosed: true }).status, "closed");
  assert.throws(
    () => resolveTopic(bus, { name: "", allowClosed: true }),
    hasCode("INVALID_ARGUMENT"),
  );
});

Deno.test("closeTopic() is idempotent and keeps the first close", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "x", mode: "new" });
  const first = await closeTopic(bus, { topicId: topic.topic_id, reason: "finished" });
  assert.equal(first.warnings.length, 0);
  assert.equal(first.topic.close_reason, "finished");
  const second = await closeTopic(bus, { topicId: topic.topic_id, reason: "other" });
  assert.equal(second.topic.closed_at, first.topic.closed_at);
  assert.equal(second.topic.close_reason, "finished");
  assert.deepEqual(second.warnings.map((w) => [w.code, w.context]), [
    ["ALREADY_CLOSED", { topic_id: topic.topic_id }],
  ]);
  const blank = await createTopic(bus, { name: "y", mode: "new" });
  const noReason = await closeTopic(bus, { topicId: blank.topic.topic_id, reason: "  " });
  assert.equal(noReason.topic.close_reason, null);
  await assert.rejects(closeTopic(bus, { topicId: "nope" }), hasCode("TOPIC_NOT_FOUND"));
});
