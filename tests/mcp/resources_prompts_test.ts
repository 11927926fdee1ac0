/**
 * Topics as resources on the peer profile: listed, read as Markdown,
 * subscribed to across processes (`notifications/resources/updated` when a
 * message arrives from another process), and `list_changed` when a topic is
 * created or closed; and the prompts of the peer and teacher profiles, with
 * topic names completed.
 *
 * @module
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { startPeer, until } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("topics are resources: listed, read, and a subscription hears another process's message", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using reader = await startPeer({ dbPath });
  await using writer = await startPeer({ dbPath });
  const topic = await writer.ok("topic_create", { name: "release" });
  const topicId = topic.topic_id as string;
  await writer.ok("topic_join", { agent_name: "codex", topic_id: topicId });
  await writer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "first **note**" }],
    wait_seconds: 0,
  });

  const updates: string[] = [];
  let listChanges = 0;
  reader.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  reader.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanges++;
  });
  const uri = `topic://${topicId}`;
  const listed = await reader.client.listResources();
  assert.deepEqual(listed.resources.map((r) => [r.uri, r.name]), [[uri, "release"]]);
  const templates = await reader.client.listResourceTemplates();
  assert.equal(templates.resourceTemplates[0]!.uriTemplate, "topic://{topic_id}");
  const read = await reader.client.readResource({ uri });
  const text = (read.contents[0] as { text: string; mimeType: string }).text;
  assert.match(text, /# release/);
  assert.match(text, /first \*\*note\*\*/);
  await assert.rejects(reader.client.readResource({ uri: "topic://nope" }), /No topic|nope/);

  await reader.client.subscribeResource({ uri });
  let updatedAt = 0;
  reader.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updatedAt ||= performance.now();
    updates.push(n.params.uri);
  });
  const sentAt = performance.now();
  await writer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "second" }],
    wait_seconds: 0,
  });
  await until(() => updates.length > 0, { timeoutMs: 5_000, what: "resources/updated" });
  assert.deepEqual(updates, [uri]);
  // The acceptance bound of issue 17 (the watch takes a few ms): from the sending call to the update.
  assert.ok(
    updatedAt - sentAt < 100,
    `updated ${Math.round(updatedAt - sentAt)} ms after the send`,
  );
  assert.match(
    ((await reader.client.readResource({ uri })).contents[0] as { text: string }).text,
    /second/,
  );

  // A new topic and a closed one change the list; a message does not.
  await writer.ok("topic_create", { name: "another" });
  await until(() => listChanges === 1, { timeoutMs: 5_000, what: "list_changed after create" });
  await writer.ok("topic_close", { topic_id: topicId, reason: "shipped" });
  await until(() => listChanges === 2, { timeoutMs: 5_000, what: "list_changed after close" });
  assert.deepEqual(
    (await reader.client.listResources()).resources.map((r) => r.name),
    ["another"],
  );
  await reader.client.unsubscribeResource({ uri });
});

Deno.test("prompts: listed, fetched with the topic's messages, and topic names complete", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using peer = await startPeer({ dbPath });
  const topic = await peer.ok("topic_create", { name: "release-1.4" });
  await peer.ok("topic_create", { name: "refactor" });
  await peer.ok("topic_create", { name: "docs" });
  await peer.ok("topic_join", { agent_name: "codex", topic_id: topic.topic_id });
  await peer.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "ship on friday?" }],
    wait_seconds: 0,
  });
  const { prompts } = await peer.client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), ["join", "catch_up", "ask"]);
  const text = async (name: string, args: Record<string, string>) =>
    ((await peer.client.getPrompt({ name, arguments: args })).messages[0]!.content as {
      text: string;
    }).text;
  assert.match(
    await text("join", { topic: "docs", name: "claude" }),
    /topic_join\(agent_name="claude", name="docs"\)/,
  );
  const catchUp = await text("catch_up", { topic: "release-1.4" });
  assert.match(catchUp, new RegExp(`sync\\(topic_id="${topic.topic_id}"`));
  assert.match(catchUp, /ship on friday\?/, "the latest messages come along");
  assert.match(
    await text("ask", { topic: "docs", question: "Where is the API?" }),
    /Where is the API\?/,
  );
  await assert.rejects(
    peer.client.getPrompt({ name: "catch_up", arguments: { topic: "nope" } }),
    /nope/,
  );
  await assert.rejects(
    peer.client.getPrompt({ name: "ask", arguments: { topic: "docs" } }),
    /question/,
  );
  const completed = await peer.client.complete({
    ref: { type: "ref/prompt", name: "catch_up" },
    argument: { name: "topic", value: "re" },
  });
  assert.deepEqual(completed.completion.values.sort(), ["refactor", "release-1.4"]);

  await using teacher = await startPeer({ dbPath, args: ["--role", "teacher"] });
  const teacherPrompts = (await teacher.client.listPrompts()).prompts.map((p) => p.name);
  assert.deepEqual(teacherPrompts, ["answer_queue"]);
  assert.match(
    ((await teacher.client.getPrompt({ name: "answer_queue", arguments: { topic: "docs" } }))
      .messages[0]!.content as { text: string }).text,
    /teacher_drain/,
  );
});
