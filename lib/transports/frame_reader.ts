/**
 * Splitting a byte stream into JSON-RPC messages, in either framing that
 * stdio hosts use: one JSON document per line, or LSP-style
 * `Content-Length: N` headers, a blank line, and N bytes of body. Both may
 * be mixed in one stream.
 *
 * Work and memory are linear and bounded: each chunk is scanned once, and
 * a message longer than `maxBytes` is skipped as it streams by and reported
 * with its first bytes, so its request id can still be answered. A framed
 * body that never arrives whole (a `Content-Length` larger than what
 * follows) must not wedge the stream: {@linkcode framesOf} calls
 * {@linkcode FrameReader.abandon} when the body stalls for
 * {@linkcode BODY_STALL_MS}, and the bytes kept are read again as lines.
 *
 * @module
 */

import type { ChunkReader } from "./direct_io.ts";

/**
 * How long the body of a `Content-Length` frame may pause before it is
 * given up: a client writes a message in one go, so a pause this long means
 * the declared length was wrong (or hostile) and the rest will never come.
 */
export const BODY_STALL_MS = 2_000;

/** What the reader found in the stream. */
export type Frame =
  | { kind: "message"; bytes: Uint8Array }
  | { kind: "oversized"; head: Uint8Array };

const NEWLINE = 0x0a;
const HEAD_BYTES = 256;
const MAX_HEADER_BYTES = 1024;
const decoder = new TextDecoder();

/** A push parser: feed it chunks, get whole frames back. */
export class FrameReader {
  readonly #maxBytes: number;
  #mode: "line" | "headers" | "body" = "line";
  #parts: Uint8Array[] = [];
  #size = 0;
  #skipping = false;
  #head = new Uint8Array(0);
  #remaining = 0;
  #contentLength = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Add `chunk` and return every frame now complete. */
  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (this.#mode === "body") {
        const take = Math.min(this.#remaining, chunk.length - i);
        this.#collect(chunk.subarray(i, i + take));
        this.#remaining -= take;
        i += take;
        if (this.#remaining === 0) {
          frames.push(this.#finish());
          this.#mode = "line";
        }
        continue;
      }
      const newline = chunk.indexOf(NEWLINE, i);
      const end = newline === -1 ? chunk.length : newline;
      this.#collect(chunk.subarray(i, end));
      if (newline === -1) break;
      i = newline + 1;
      this.#endOfLine(frames);
    }
    return frames;
  }

  /** True while a `Content-Length` frame has begun and its body is not complete. */
  get awaitingBody(): boolean {
    return this.#mode !== "line";
  }

  /**
   * Give up the framed message in progress (its body stalled): the bytes
   * kept of it are read again as newline-delimited messages, so a client
   * that declared a wrong length is back in step at its next line. A body
   * already past `maxBytes` kept only its head, which is dropped.
   *
   * @returns the frames found in the kept bytes
   */
  abandon(): Frame[] {
    if (this.#mode === "line") return [];
    const kept = this.#skipping ? new Uint8Array(0) : concat(this.#parts);
    this.#reset();
    this.#mode = "line";
    this.#remaining = 0;
    this.#contentLength = 0;
    const frames = this.push(kept);
    // What is left is an unfinished line: it waits for its newline as any line does.
    return frames;
  }

  /** Keep bytes of the current frame, or only its head once it is too long. */
  #collect(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    const limit = this.#mode === "headers" ? MAX_HEADER_BYTES : this.#maxBytes;
    if (!this.#skipping && this.#size + bytes.length > limit) {
      this.#skipping = true;
      this.#head = concat([...this.#parts, bytes]).slice(0, HEAD_BYTES);
      this.#parts = [];
    }
    if (!this.#skipping) this.#parts.push(bytes.slice());
    this.#size += bytes.length;
  }

  #endOfLine(frames: Frame[]): void {
    if (this.#mode === "headers") {
      const header = this.#skipping ? "?" : decoder.decode(concat(this.#parts)).replace(/\r$/, "");
      this.#reset();
      if (header === "") {
        this.#mode = "body";
        this.#remaining = this.#contentLength;
        if (this.#contentLength === 0) {
          frames.push(this.#finish());
          this.#mode = "line";
        }
      }
      return; // other headers (Content-Type) are ignored
    }
    if (this.#skipping) {
      frames.push(this.#finish());
      return;
    }
    const whole = concat(this.#parts);
    const line = whole.at(-1) === 0x0d ? whole.subarray(0, -1) : whole; // CRLF line ends
    this.#reset();
    if (line.length <= MAX_HEADER_BYTES) {
      const text = decoder.decode(line).replace(/\r$/, "");
      const header = /^content-length:\s*(\d+)\s*$/i.exec(text);
      if (header) {
        this.#mode = "headers";
        this.#contentLength = Number(header[1]);
        return;
      }
      if (text.trim() === "") return;
    }
    frames.push({ kind: "message", bytes: line });
  }

  #finish(): Frame {
    const frame: Frame = this.#skipping
      ? { kind: "oversized", head: this.#head }
      : { kind: "message", bytes: concat(this.#parts) };
    this.#reset();
    return frame;
  }

  #reset(): void {
    this.#parts = [];
    this.#size = 0;
    this.#skipping = false;
    this.#head = new Uint8Array(0);
  }
}

/** The bytes of `parts`, in order, in one array. */
export function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The frames read from `reader` until it ends (or is cancelled), a framed
 * body that pauses for `stallMs` given up and read as lines.
 */
export async function* framesOf(
  reader: ChunkReader,
  maxBytes: number,
  stallMs = BODY_STALL_MS,
): AsyncGenerator<Frame> {
  const frames = new FrameReader(maxBytes);
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  for (;;) {
    pending ??= reader.read();
    const result = frames.awaitingBody ? await withStall(pending, stallMs) : await pending;
    if (result === "stalled") {
      yield* frames.abandon();
      continue;
    }
    pending = undefined;
    if (result.done) return;
    yield* frames.push(result.value);
  }
}

/** `read`, or "stalled" when it has not settled within `ms` (the read stays pending). */
async function withStall<T>(read: Promise<T>, ms: number): Promise<T | "stalled"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<"stalled">((resolve) => {
    timer = setTimeout(() => resolve("stalled"), ms);
  });
  try {
    return await Promise.race([read, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The JSON-RPC error that answers an oversized message, by the request id
 * read from its first bytes (null when none can be read).
 */
export function tooLargeReply(head: Uint8Array, maxBytes: number) {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})/.exec(decoder.decode(head));
  const id = match ? JSON.parse(match[1]!) as string | number : null;
  const message = `Request too large: lines are limited to ${maxBytes} bytes`;
  return { jsonrpc: "2.0", id, error: { code: -32600, message } };
}
