/**
 * One tool result stays small enough for the clients that read it. Both
 * Claude Code and Codex hand their model the `structuredContent` JSON;
 * Codex cuts a tool output past about 12,000 bytes out of its middle, Claude
 * Code swaps one of 50,000 characters for a file path (measured with
 * scripts/measure_clients.ts). A `sync` of many large messages returns as
 * many as fit, says `has_more`, moves the cursor only past what it
 * returned, and cuts no body in either form.
 */

import assert from "node:assert/strict";
import { connectInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Codex 0.169.0 keeps a tool output whole up to about this many bytes. */
const CODEX_WHOLE_BYTES = 12_000;

const bytes = (text: string) => new TextEncoder().encode(text).length;

type Structured = Record<string, unknown> & {
  received: { seq: number; content_markdown: string }[];
  has_more: boolean;
  cursor: { last_seq: number };
};

Deno.test("sync returns 10 messages of 3,000 characters over several calls, none cut", async () => {
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
    // Multi-byte text with quotes and newlines, which JSON escapes.
    (_, i) => `message ${i} ` + `ünïcødé "${i}"\n`.repeat(300).slice(0, 2990),
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
    assert.ok(bytes(json) <= CODEX_WHOLE_BYTES, `structuredContent is ${bytes(json)} bytes`);
    assert.ok(bytes(text) <= CODEX_WHOLE_BYTES, `the text is ${bytes(text)} bytes`);
    for (const message of structured.received) {
      assert.ok(text.includes(message.content_markdown), "the text carries the whole body");
      received.push(message.content_markdown);
    }
    assert.equal(structured.cursor.last_seq, structured.received.at(-1)?.seq ?? received.length);
    if (!structured.has_more) break;
  }
  assert.deepEqual(received, bodies, "every message once, in order, whole");
});
