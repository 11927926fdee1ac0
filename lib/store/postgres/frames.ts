/**
 * The shared buffer between the main thread and the PostgreSQL worker.
 *
 * Bytes 0–31 are eight 32-bit slots: `STATE` (1 while a request waits),
 * `RESPONSE_SEQ` (the sequence number of the last answer), `REQUEST_SEQ`
 * (that of the waiting request), `LENGTH` (bytes of the frame) and `ALIVE`
 * (1 once the worker serves). The frame, JSON, follows from byte 32; the buffer grows (it is a growable
 * `SharedArrayBuffer`) when a frame does not fit. Binary values cross as
 * `{"$bytes": base64}`: JSON has no bytes, and only vectors are binary.
 *
 * @module
 */

/** Index of the request flag. */
export const STATE = 0;
/** Index of the last answered sequence number. */
export const RESPONSE_SEQ = 1;
/** Index of the waiting request's sequence number. */
export const REQUEST_SEQ = 2;
const LENGTH = 3;
/** Index of the flag the worker sets once it has loaded and serves. */
export const ALIVE = 4;
const HEADER_BYTES = 32;
const INITIAL_BYTES = 1 << 20;
/** Largest frame (a request or an answer): 256 MiB. */
export const MAX_FRAME_BYTES = 256 << 20;

/**
 * The worker's error code for a write's batch that found a statement new to
 * the connection while its transaction held locks: the transaction was
 * ended, the statement prepared, and the write is to run again from its
 * start (see `worker.ts`).
 */
export const UNPREPARED = "UNPREPARED";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A new shared buffer for one bridge. */
export function newBuffer(): SharedArrayBuffer {
  // deno-lint-ignore no-explicit-any
  const Growable = SharedArrayBuffer as any;
  return new Growable(INITIAL_BYTES, { maxByteLength: MAX_FRAME_BYTES + HEADER_BYTES });
}

/** The slots of `buffer`. */
export function slots(buffer: SharedArrayBuffer): Int32Array {
  return new Int32Array(buffer, 0, 8);
}

/**
 * Write `frame` into `buffer`, growing it if needed.
 *
 * @throws {RangeError} when the frame is larger than {@linkcode MAX_FRAME_BYTES}
 */
export function encodeFrame(buffer: SharedArrayBuffer, frame: unknown): void {
  const bytes = encoder.encode(JSON.stringify(frame));
  if (bytes.length > MAX_FRAME_BYTES) {
    throw new RangeError(`A database frame of ${bytes.length} bytes is over the limit`);
  }
  const needed = HEADER_BYTES + bytes.length;
  // deno-lint-ignore no-explicit-any
  const growable = buffer as any;
  if (buffer.byteLength < needed) growable.grow(Math.min(needed * 2, growable.maxByteLength));
  new Uint8Array(buffer, HEADER_BYTES, bytes.length).set(bytes);
  Atomics.store(slots(buffer), LENGTH, bytes.length);
}

/** Read the frame in `buffer`. */
export function decodeFrame(buffer: SharedArrayBuffer): unknown {
  const length = Atomics.load(slots(buffer), LENGTH);
  // TextDecoder does not read shared memory: copy out first.
  return JSON.parse(decoder.decode(new Uint8Array(buffer, HEADER_BYTES, length).slice()));
}

/** Replace bytes in a list of values by their wire form. */
export function bytesToWire(values: unknown[]): unknown[] {
  return values.some((v) => v instanceof Uint8Array)
    ? values.map((v) => v instanceof Uint8Array ? { $bytes: toBase64(v) } : v)
    : values;
}

/** Undo {@linkcode bytesToWire} for one value. */
export function bytesFromWire(value: unknown): unknown {
  if (value !== null && typeof value === "object" && "$bytes" in value) {
    return fromBase64(String((value as { $bytes: unknown }).$bytes));
  }
  return value;
}

/** Replace bytes in the columns of rows by their wire form (in place). */
export function rowsToWire(rows: Record<string, unknown>[]): boolean {
  let binary = false;
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (value instanceof Uint8Array) {
        row[key] = { $bytes: toBase64(value) };
        binary = true;
      }
    }
  }
  return binary;
}

/** Undo {@linkcode rowsToWire} (in place). */
export function rowsFromWire(rows: Record<string, unknown>[]): void {
  for (const row of rows) {
    for (const key in row) row[key] = bytesFromWire(row[key]);
  }
}

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

function fromBase64(text: string): Uint8Array {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}
