/**
 * One reader of changes per process: every open event stream is fed by the
 * same `EventHub`, which runs only while a stream is open.
 */

import assert from "node:assert/strict";
import { joinTopic } from "../../lib/bus/names.ts";
import { Session } from "../../lib/bus/session.ts";
import { sync } from "../../lib/bus/sync.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { EventHub, eventStream } from "../../lib/console/events.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("EventHub feeds every open stream from one reader, and stops with the last", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using server = openTestBus(path);
  await using other = openTestBus(path);
  const { topic } = await createTopic(other, { name: "fan-out", mode: "new" });
  const session = new Session();
  await joinTopic(other, session, { agentName: "w", topicId: topic.topic_id, allowClosed: false });
  const hub = new EventHub(server);
  const stop = new AbortController();
  const readers = Array.from({ length: 5 }, (_, i) =>
    eventStream(server, {
      hub,
      keepAliveMs: 60_000,
      signal: stop.signal,
      // Every other stream filters on the topic; all of them see its message.
      ...(i % 2 ? { topicId: topic.topic_id } : {}),
    }).body!.pipeThrough(new TextDecoderStream()).getReader());
  try {
    // Each stream says ready before anything else.
    for (const reader of readers) {
      let text = "";
      while (!text.includes("event: ready")) text += (await reader.read()).value ?? "";
    }
    assert.equal(hub.subscribers, 5, "every stream listens to the one hub");
    await sync(other, session.require(topic.topic_id), {
      topicId: topic.topic_id,
      outbox: [{ content_markdown: "to everyone" }],
      maxItems: 1,
      includeSelf: false,
      waitSeconds: 0,
      autoAdvance: true,
    });
    for (const reader of readers) {
      let text = "";
      while (!text.includes("to everyone")) text += (await reader.read()).value ?? "";
    }
  } finally {
    for (const reader of readers) await reader.cancel().catch(() => {});
  }
  assert.equal(hub.subscribers, 0, "closed streams unsubscribe");
  stop.abort();
  hub.close();
});
