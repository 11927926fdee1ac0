/**
 * Tests of topic presence and cursor_reset, in process.
 */

import assert from "node:assert/strict";
import { BusError } from "../../lib/errors.ts";
import { joinTopic } from "../../lib/bus/names.ts";
import { cursorReset, topicPresence } from "../../lib/bus/presence.ts";
import { Session } from "../../lib/bus/session.ts";
import { sync } from "../../lib/bus/sync.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

function hasCode(code: string, pattern?: RegExp) {
  return (error: unknown) =>
    error instanceof BusError && error.code === code && (!pattern || pattern.test(error.message));
}

Deno.test("topicPresence() lists peers that synced in the window, newest first", async () => {
  await using tmp = await tmpDir();
  let clock = 1000;
  await using base = openTestBus(`${tmp.path}/bus.sqlite`);
  const bus = { ...base, now: () => clock };
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  const ids = [];
  for (const agentName of ["old", "mid", "new"]) {
    const session = new Session();
    await joinTopic(bus, session, { agentName, topicId: topic.topic_id, allowClosed: false });
    ids.push(session.require(topic.topic_id));
  }
  const read = {
    topicId: topic.topic_id,
    outbox: [],
    maxItems: 5,
    includeSelf: false,
    waitSeconds: 0,
    autoAdvance: true,
  };
  clock = 1000;
  await sync(bus, ids[0]!, read);
  clock = 1100;
  await sync(bus, ids[1]!, read);
  clock = 1200;
  await sync(bus, ids[2]!, read);
  clock = 1250;
  const all = topicPresence(bus, { topicId: topic.topic_id, windowSeconds: 300, limit: 10 });
  assert.deepEqual(all.peers.map((p) => p.agent_name), ["new", "mid", "old"]);
  assert.equal(all.peers[0]!.age_seconds, 50);
  assert.equal(all.now, 1250);
  const recent = topicPresence(bus, { topicId: topic.topic_id, windowSeconds: 200, limit: 10 });
  assert.deepEqual(recent.peers.map((p) => p.agent_name), ["new", "mid"]);
  assert.equal(
    topicPresence(bus, { topicId: topic.topic_id, windowSeconds: 300, limit: 1 }).count,
    1,
  );
  assert.throws(
    () => topicPresence(bus, { topicId: topic.topic_id, windowSeconds: 0, limit: 1 }),
    hasCode("INVALID_ARGUMENT"),
  );
  assert.throws(
    () => topicPresence(bus, { topicId: topic.topic_id, windowSeconds: 1, limit: 0 }),
    hasCode("INVALID_ARGUMENT"),
  );
  assert.throws(
    () => topicPresence(bus, { topicId: "nope", windowSeconds: 1, limit: 1 }),
    hasCode("TOPIC_NOT_FOUND"),
  );
});

Deno.test("cursorReset() replays history and bounds last_seq", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  const a = new Session();
  const b = new Session();
  await joinTopic(bus, a, { agentName: "a", topicId: topic.topic_id, allowClosed: false });
  await joinTopic(bus, b, { agentName: "b", topicId: topic.topic_id, allowClosed: false });
  const read = {
    topicId: topic.topic_id,
    outbox: [],
    maxItems: 20,
    includeSelf: false,
    waitSeconds: 0,
    autoAdvance: true,
  };
  await sync(bus, a.require(topic.topic_id), {
    ...read,
    outbox: [{ content_markdown: "1" }, { content_markdown: "2" }],
  });
  assert.equal((await sync(bus, b.require(topic.topic_id), read)).received.length, 2);
  assert.equal((await sync(bus, b.require(topic.topic_id), read)).received.length, 0);
  const reset = await cursorReset(bus, b.require(topic.topic_id), {
    topicId: topic.topic_id,
    lastSeq: 0,
  });
  assert.equal(reset.cursor.last_seq, 0);
  assert.equal((await sync(bus, b.require(topic.topic_id), read)).received.length, 2);
  await cursorReset(bus, b.require(topic.topic_id), { topicId: topic.topic_id, lastSeq: 1 });
  assert.deepEqual((await sync(bus, b.require(topic.topic_id), read)).received.map((m) => m.seq), [
    2,
  ]);
  await assert.rejects(
    cursorReset(bus, b.require(topic.topic_id), { topicId: topic.topic_id, lastSeq: 3 }),
    hasCode("INVALID_ARGUMENT", /last_seq exceeds latest message seq \(2\)/),
  );
  await assert.rejects(
    cursorReset(bus, b.require(topic.topic_id), { topicId: topic.topic_id, lastSeq: -1 }),
    hasCode("INVALID_ARGUMENT"),
  );
});
