/**
 * `FrameReader`: both stdin framings, split at every byte boundary, mixed,
 * and oversized messages skipped with their head kept.
 */

import assert from "node:assert/strict";
import { type Frame, FrameReader } from "../../lib/transports/frame_reader.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function lsp(body: string): string {
  return `Content-Length: ${encoder.encode(body).length}\r\n\r\n${body}`;
}

function texts(frames: Frame[]): string[] {
  return frames.map((f) =>
    f.kind === "message" ? decoder.decode(f.bytes) : `oversized:${decoder.decode(f.head)}`
  );
}

const A = '{"jsonrpc":"2.0","id":1,"method":"a","params":{"s":"héllo ✓\\n"}}';
const B = '{"jsonrpc":"2.0","id":2,"method":"b"}';
const STREAM = `${A}\n${lsp(B)}\r\n${lsp(A)}${B}\r\n\n` +
  `Content-Length: ${
    encoder.encode(B).length
  }\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${B}`;

Deno.test("FrameReader reads newline-delimited and Content-Length frames, mixed, in one chunk", () => {
  const reader = new FrameReader(1 << 20);
  assert.deepEqual(texts(reader.push(encoder.encode(STREAM))), [A, B, A, B, B]);
});

Deno.test("FrameReader gives the same frames however the stream is split", () => {
  const bytes = encoder.encode(STREAM);
  for (const size of [1, 2, 3, 7, 64]) {
    const reader = new FrameReader(1 << 20);
    const frames: Frame[] = [];
    for (let i = 0; i < bytes.length; i += size) {
      frames.push(...reader.push(bytes.subarray(i, i + size)));
    }
    assert.deepEqual(texts(frames), [A, B, A, B, B], `chunks of ${size}`);
  }
});

Deno.test("FrameReader skips an oversized message in either framing, keeps its head, and goes on", () => {
  const big = `{"jsonrpc":"2.0","id":7,"method":"x","params":{"pad":"${"z".repeat(5000)}"}}`;
  const reader = new FrameReader(1000);
  const frames = reader.push(encoder.encode(`${big}\n${B}\n${lsp(big)}${lsp(B)}`));
  assert.deepEqual(frames.map((f) => f.kind), ["oversized", "message", "oversized", "message"]);
  for (const frame of [frames[0]!, frames[2]!]) {
    assert.ok(
      frame.kind === "oversized" &&
        decoder.decode(frame.head).startsWith('{"jsonrpc":"2.0","id":7'),
    );
  }
  assert.deepEqual(texts([frames[1]!, frames[3]!]), [B, B]);
});

Deno.test("FrameReader.abandon() gives up a body that never comes whole and reads what came as lines", () => {
  const reader = new FrameReader(1 << 20);
  assert.deepEqual(
    texts(reader.push(encoder.encode(`Content-Length: 100000000\r\n\r\n${B}\n`))),
    [],
  );
  assert.equal(reader.awaitingBody, true);
  assert.deepEqual(texts(reader.abandon()), [B]);
  assert.equal(reader.awaitingBody, false);
  assert.deepEqual(texts(reader.push(encoder.encode(`${A}\n`))), [A], "back in step");
  // A stall in the headers, and a partial line left after the abandoned body.
  reader.push(encoder.encode("Content-Length: 5\r\n"));
  assert.deepEqual(texts(reader.abandon()), []);
  reader.push(encoder.encode(`Content-Length: 900\r\n\r\n${B}\n{"jsonrpc"`));
  assert.deepEqual(texts(reader.abandon()), [B]);
  assert.deepEqual(texts(reader.push(encoder.encode(':"2.0","id":3,"method":"c"}\n'))), [
    '{"jsonrpc":"2.0","id":3,"method":"c"}',
  ]);
  assert.deepEqual(reader.abandon(), [], "nothing to give up in line mode");
});
