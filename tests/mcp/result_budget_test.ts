/**
 * One tool result stays small enough for the clients that read it: Claude
 * Code hands its model the `structuredContent` JSON and replaces a result of
 * 50,000 characters or more with a file path (scripts/measure_clients.ts). A `sync` of
 * many large messages returns as many as fit, says `has_more`, moves the
 * cursor only past what it returned, and cuts no body in either form.
 */

import assert from "node:assert/strict";
import { DEFAULTS } from "../../lib/config.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Claude Code 2.1.197 replaces a result of this many characters or more with a file path. */
const CLAUDE_CODE_INLINE_CHARS = 50_000;

type Structured = Record<string, unknown> & {
  received: { seq: number; content_markdown: string }[];
  has_more: boolean;
  cursor: { last_seq: number };
};

Deno.test("sync returns 10 messages of 6,000 characters over several calls, none cut", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using writer = await connectInProcess(path, "peer");
  await using reader = await connectInProcess(path, "peer");
  const created = await writer.client.callTool({
    name: "topic_create",
    arguments: { name: "big" },
  });
  const topicId = (created.structuredContent as { topic_id: string }).topic_id;
  for (const [server, name] of [[writer, "writer"], [reader, "reader"]] as const) {
    await server.client.callTool({
      name: "topic_join",
      arguments: { topic_id: topicId, agent_name: name },
    });
  }
  const bodies = Array.from(
    { length: 10 },
    (_, i) => `message ${i} ` + `ünïcødé ${i} `.repeat(500).slice(0, 5990),
  );
  await writer.client.callTool({
    name: "sync",
    arguments: {
      topic_id: topicId,
      outbox: bodies.map((content_markdown) => ({ content_markdown })),
      wait_seconds: 0,
    },
  });

  const received: string[] = [];
  for (let call = 0; call < 20; call++) {
    const result = await reader.client.callTool({
      name: "sync",
      arguments: { topic_id: topicId, wait_seconds: 0 },
    });
    const structured = result.structuredContent as Structured;
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    const json = JSON.stringify(structured);
    assert.ok(json.length < CLAUDE_CODE_INLINE_CHARS, `structuredContent is ${json.length}`);
    assert.ok(
      json.length + text.length <= DEFAULTS.toolResultMaxChars + 6_500,
      "within the budget, past it only by the one message always returned",
    );
    for (const message of structured.received) {
      assert.ok(text.includes(message.content_markdown), "the text carries the whole body");
      received.push(message.content_markdown);
    }
    assert.equal(structured.cursor.last_seq, structured.received.at(-1)?.seq ?? received.length);
    if (!structured.has_more) break;
  }
  assert.deepEqual(received, bodies, "every message once, in order, whole");
});
