/**
 * Attachments (seed 002: "file or image") are stored whatever their type and
 * served so that they cannot run: raster images inline under their own type,
 * everything else (SVG, HTML, text) as an `application/octet-stream`
 * download under its sanitised name, every `/api` response with a sandboxing
 * CSP and `nosniff`. Agents get files back as embedded `resource` blocks.
 * The same attack in a real browser: tests/console/browser_test.ts.
 */

import assert from "node:assert/strict";
import { connectAgent, post } from "../_helpers/chat.ts";
import { connectInProcess, serveHttpInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { HOSTILE_HTML, HOSTILE_SVG } from "../_helpers/hostile_files.ts";

const b64 = (text: string) => btoa(text);
Deno.test("attachments of any type are stored, returned to agents, and served inert", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using agent = await connectInProcess(dbPath, "chatbus");
  await using http = serveHttpInProcess(dbPath);
  const alice = await connectAgent(agent, "files");
  const png = btoa(String.fromCharCode(137, 80, 78, 71, 13, 10, 26, 10));
  const posted = await post(alice, "four attachments", {
    metadata: {
      attachments: [
        { type: "image", mimeType: "image/png", data: png },
        { type: "image", mimeType: "image/svg+xml", data: b64(HOSTILE_SVG) },
        {
          type: "file",
          mimeType: "text/html",
          data: b64(HOSTILE_HTML),
          name: "../../évil page.html",
        },
        { mimeType: "text/plain", data: b64("hello"), filename: "notes.txt" },
      ],
    },
  });
  const id = posted.msg_id as string;
  const stored = (await agent.ok("msg_get", { message_id: id })).message as {
    metadata: { attachments: unknown[] };
  };
  assert.deepEqual(stored.metadata.attachments, [
    { type: "image", mimeType: "image/png", bytes: 8 },
    { type: "image", mimeType: "image/svg+xml", bytes: HOSTILE_SVG.length },
    { type: "file", mimeType: "text/html", bytes: HOSTILE_HTML.length, name: "évil page.html" },
    { type: "file", mimeType: "text/plain", bytes: 5, name: "notes.txt" },
  ]);

  // Agents get images as image blocks and files as embedded resources.
  const blocks = (await agent.call("msg_list", { thread_id: alice.threadId, after_seq: 0 }))
    .content as { type: string; mimeType?: string; resource?: Record<string, string> }[];
  const files = blocks.filter((b) => b.type === "image" || b.type === "resource");
  assert.deepEqual(files.map((b) => b.mimeType ?? b.resource?.mimeType), [
    "image/png",
    "image/svg+xml",
    "text/html",
    "text/plain",
  ]);
  assert.equal(files[3]!.resource!.blob, b64("hello"));
  assert.equal(files[3]!.resource!.uri, `agent-bus://messages/${id}/attachments/3`);

  const get = (n: number) => fetch(`${http.url}/api/messages/${id}/attachments/${n}`);
  const expected: [number, string, RegExp, string][] = [
    [0, "image/png", /^inline$/, String.fromCharCode(137, 80, 78, 71, 13, 10, 26, 10)],
    [1, "application/octet-stream", /^attachment; filename="attachment-1"/, HOSTILE_SVG],
    [
      2,
      "application/octet-stream",
      /^attachment; filename="_vil_page.html"; filename\*=UTF-8''%C3%A9vil%20page\.html$/,
      HOSTILE_HTML,
    ],
    [3, "application/octet-stream", /^attachment; filename="notes.txt"/, "hello"],
  ];
  for (const [n, type, disposition, body] of expected) {
    const response = await get(n);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), type, `attachment ${n}`);
    assert.match(response.headers.get("content-disposition") ?? "", disposition);
    assert.equal(response.headers.get("content-security-policy"), "default-src 'none'; sandbox");
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.equal(
      String.fromCharCode(...bytes),
      n === 2 ? unescape(encodeURIComponent(body)) : body,
    );
  }
  const missing = await get(9);
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("content-security-policy"), "default-src 'none'; sandbox");
  await missing.body?.cancel();
  // Every /api answer is inert, JSON included.
  const topics = await fetch(`${http.url}/api/topics`);
  assert.equal(topics.headers.get("content-security-policy"), "default-src 'none'; sandbox");
  assert.equal(topics.headers.get("x-content-type-options"), "nosniff");
  await topics.body?.cancel();

  // An image must be an image, and a type must look like one.
  for (
    const bad of [
      { type: "image", mimeType: "text/html", data: b64("x") },
      { type: "video", mimeType: "video/mp4", data: b64("x") },
      { type: "file", mimeType: "text/html; charset=utf-8<script>", data: b64("x") },
    ]
  ) {
    const refused = await agent.fail("msg_post", {
      thread_id: alice.threadId,
      author: alice.agentId,
      content: "bad",
      expected_last_seq: alice.seq,
      reply_token: alice.replyToken,
      metadata: { attachments: [bad] },
    });
    assert.equal(refused.code, "INVALID_ARGUMENT", JSON.stringify(bad));
  }
});
