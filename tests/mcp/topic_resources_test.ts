/**
 * Topics as resources on the peer profile: listed, read as Markdown,
 * subscribed to across processes (`notifications/resources/updated` when a
 * message arrives from another process), and `list_changed` when a topic is
 * created or closed.
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
  await writer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "second" }],
    wait_seconds: 0,
  });
  await until(() => updates.length > 0, { timeoutMs: 5_000, what: "resources/updated" });
  assert.deepEqual(updates, [uri]);
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
