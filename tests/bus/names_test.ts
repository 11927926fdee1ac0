/**
 * Tests of joining under unique names with reclaim tokens, in process.
 */

import assert from "node:assert/strict";
import { BusError } from "../../lib/errors.ts";
import { joinTopic, suggestNames } from "../../lib/bus/names.ts";
import { Session } from "../../lib/bus/session.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { topicPresence } from "../../lib/bus/presence.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { execSql } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

function hasCode(code: string, pattern?: RegExp) {
  return (error: unknown) =>
    error instanceof BusError && error.code === code && (!pattern || pattern.test(error.message));
}

Deno.test("joinTopic() reserves a name and lets only its token reclaim it", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  const first = await joinTopic(bus, new Session(), {
    agentName: " codex ",
    topicId: topic.topic_id,
    allowClosed: false,
  });
  assert.equal(first.agent_name, "codex", "names are trimmed");
  assert.match(first.reclaim_token, /^[0-9a-f]{32}$/);
  const other = new Session();
  await assert.rejects(
    joinTopic(bus, other, { agentName: "codex", topicId: topic.topic_id, allowClosed: false }),
    (error: unknown) => {
      assert.ok(error instanceof BusError);
      assert.equal(error.code, "AGENT_NAME_IN_USE");
      assert.equal(error.context?.requested_agent_name, "codex");
      assert.ok((error.context?.suggested_agent_names as string[]).includes("codex reviewer"));
      return true;
    },
  );
  await assert.rejects(
    joinTopic(bus, other, {
      agentName: "codex",
      topicId: topic.topic_id,
      allowClosed: false,
      reclaimToken: "wrong",
    }),
    hasCode("AGENT_NAME_IN_USE", /reclaim_token is wrong/),
  );
  assert.throws(() => other.require(topic.topic_id), hasCode("AGENT_NOT_JOINED"));
  const again = await joinTopic(bus, other, {
    agentName: "codex",
    topicId: topic.topic_id,
    allowClosed: false,
    reclaimToken: first.reclaim_token,
  });
  assert.equal(again.reclaim_token, first.reclaim_token);
  assert.equal(other.require(topic.topic_id).agentName, "codex");
});

Deno.test("joinTopic() in the same session needs no token to rejoin", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  const session = new Session();
  const args = { agentName: "a", topicId: topic.topic_id, allowClosed: false };
  const first = await joinTopic(bus, session, args);
  const second = await joinTopic(bus, session, args);
  assert.equal(second.reclaim_token, first.reclaim_token);
});

Deno.test("joinTopic() validates names and the topic selector", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  const s = new Session();
  const base = { topicId: topic.topic_id, allowClosed: false };
  await assert.rejects(
    joinTopic(bus, s, { ...base, agentName: "  " }),
    hasCode("INVALID_ARGUMENT"),
  );
  await assert.rejects(
    joinTopic(bus, s, { ...base, agentName: "x".repeat(65) }),
    hasCode("INVALID_ARGUMENT", /max length \(64\)/),
  );
  await assert.rejects(
    joinTopic(bus, s, { ...base, agentName: "bad\nname" }),
    hasCode("INVALID_ARGUMENT", /control characters/),
  );
  await assert.rejects(
    joinTopic(bus, s, { ...base, agentName: "a", reclaimToken: "   " }),
    hasCode("INVALID_ARGUMENT", /^reclaim_token must be a non-empty string$/),
  );
  await assert.rejects(
    joinTopic(bus, s, { agentName: "a", topicId: topic.topic_id, name: "t", allowClosed: false }),
    hasCode("INVALID_ARGUMENT", /exactly one of topic_id or name/),
  );
  await assert.rejects(
    joinTopic(bus, s, { agentName: "a", allowClosed: false }),
    hasCode("INVALID_ARGUMENT", /Provide topic_id or name/),
  );
  await assert.rejects(
    joinTopic(bus, s, { agentName: "a", topicId: "missing", allowClosed: false }),
    hasCode("TOPIC_NOT_FOUND"),
  );
  const ok = await joinTopic(bus, s, {
    agentName: "codex reviewer",
    name: "t",
    allowClosed: false,
  });
  assert.equal(ok.agent_name, "codex reviewer", "inner spaces are allowed");
});

Deno.test("joinTopic() does not mark presence; a legacy cursor's name is adopted", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using bus = openTestBus(path);
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  await joinTopic(bus, new Session(), {
    agentName: "a",
    topicId: topic.topic_id,
    allowClosed: false,
  });
  assert.equal(
    topicPresence(bus, { topicId: topic.topic_id, windowSeconds: 60, limit: 10 }).count,
    0,
  );
  await execSql(
    path,
    "INSERT INTO cursors (topic_id, agent_name, last_seq, updated_at) VALUES (?, 'old-peer', 0, 1)",
    topic.topic_id,
  );
  const adopted = await joinTopic(bus, new Session(), {
    agentName: "old-peer",
    topicId: topic.topic_id,
    allowClosed: false,
  });
  assert.equal(adopted.reclaimed, true);
});

Deno.test("suggestNames() skips taken names and keeps a stable order", () => {
  const names = suggestNames("codex", new Set(["codex reviewer"]));
  assert.equal(names[0], "codex frontend");
  assert.ok(!names.includes("codex reviewer"));
  assert.ok(names.every((name) => name.length <= 64));
  const long = suggestNames("x".repeat(64), new Set());
  assert.ok(long.every((name) => name.length <= 64));
});
