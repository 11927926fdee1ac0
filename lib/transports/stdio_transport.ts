/**
 * A bounded MCP stdio transport.
 *
 * The SDK's `StdioServerTransport` closes the whole connection when one line
 * exceeds its buffer, and never notices that stdin ended, so a server whose
 * client died could linger for as long as a `sync` waits. This transport:
 *
 * - reads newline-delimited JSON and LSP-style `Content-Length:` framing
 *   (see `frame_reader.ts`) and writes newline-delimited JSON;
 * - drops an oversized message, answering its request (when an id can be
 *   read from the message's start) with a JSON-RPC error, and keeps serving;
 * - answers a line that is not JSON with a JSON-RPC parse error;
 * - gives up a `Content-Length` body that stalls for `BODY_STALL_MS`
 *   (`frame_reader.ts`) and reads what came of it as lines, so a wrong length cannot wedge it;
 * - reports end of input through `onclose`, so the process can exit.
 *
 * Streams are injectable for tests; the defaults are the process's stdio.
 *
 * @module
 */

import { type JSONRPCMessage, JSONRPCMessageSchema, type Transport } from "../mcp/_sdk.ts";
import { type Frame, framesOf, tooLargeReply } from "./frame_reader.ts";
import type { ChunkReader } from "./direct_io.ts";

/** Options of {@linkcode StdioTransport}. */
export interface StdioTransportOptions {
  /** What to read: a stream, or a reader of a connection read directly (`direct_io.ts`). */
  stdin?: ReadableStream<Uint8Array> | ChunkReader;
  /** Where to write: a stream, or a write that keeps its writes in order. */
  stdout?: WritableStream<Uint8Array> | ((bytes: Uint8Array) => Promise<void>);
  /** Longest accepted message in bytes. */
  maxLineBytes: number;
}

/** JSON-RPC over stdin/stdout, one message per line. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: ReadableStream<Uint8Array> | ChunkReader;
  readonly #write: (bytes: Uint8Array) => Promise<void>;
  readonly #maxLineBytes: number;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  #reader: ChunkReader | undefined;
  #closed = false;

  constructor(options: StdioTransportOptions) {
    this.#stdin = options.stdin ?? Deno.stdin.readable;
    const stdout = options.stdout ?? Deno.stdout.writable;
    if (typeof stdout === "function") {
      this.#write = stdout;
    } else {
      const writer = stdout.getWriter();
      this.#write = (bytes) => writer.write(bytes);
    }
    this.#maxLineBytes = options.maxLineBytes;
  }

  /** Start reading stdin in the background. */
  start(): Promise<void> {
    this.#reader = "getReader" in this.#stdin ? this.#stdin.getReader() : this.#stdin;
    this.#readLoop().catch((error) => this.onerror?.(asError(error))).finally(() => this.close());
    return Promise.resolve();
  }

  /** Write one message as a line. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    await this.#write(this.#encoder.encode(JSON.stringify(message) + "\n"));
  }

  /** Stop reading and report the close once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#reader?.cancel?.().catch(() => {});
    this.onclose?.();
  }

  async #readLoop(): Promise<void> {
    for await (const frame of framesOf(this.#reader!, this.#maxLineBytes)) {
      if (this.#closed) return;
      this.#handleFrame(frame);
    }
  }

  #handleFrame(frame: Frame): void {
    if (frame.kind === "message") this.#handleLine(frame.bytes);
    else this.#reject(frame.head);
  }

  #handleLine(bytes: Uint8Array): void {
    const line = this.#decoder.decode(bytes).replace(/\r$/, "");
    if (!line.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      this.#replyError(null, -32700, "Parse error: the line is not valid JSON");
      return;
    }
    if (isPlainCall(json)) {
      this.onmessage?.(json);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.#replyError(idOf(json), -32600, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #reject(head: Uint8Array): void {
    const reply = tooLargeReply(head, this.#maxLineBytes);
    this.#replyError(reply.id, reply.error.code, reply.error.message);
  }

  #replyError(id: string | number | null, code: number, message: string): void {
    const reply = { jsonrpc: "2.0", id, error: { code, message } };
    this.#write(this.#encoder.encode(JSON.stringify(reply) + "\n")).catch((error) =>
      this.onerror?.(asError(error))
    );
  }
}

function idOf(json: unknown): string | number | null {
  if (json === null || typeof json !== "object") return null;
  const id = (json as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

const CALL_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

/**
 * True for the messages nearly every line is — a request or notification
 * with plain params and no `_meta` — checked by hand: the SDK's schema is a
 * union of four strict objects, and trying it cost about a tenth of a
 * call's transport work. Anything else goes through the schema, which
 * accepts exactly what this accepts and more.
 */
function isPlainCall(json: unknown): json is JSONRPCMessage {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return false;
  const message = json as Record<string, unknown>;
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  for (const key in message) if (!CALL_KEYS.has(key)) return false;
  const id = message.id;
  if (id !== undefined && typeof id !== "string" && !Number.isInteger(id)) return false;
  const params = message.params;
  if (params === undefined) return true;
  return typeof params === "object" && params !== null && !Array.isArray(params) &&
    !("_meta" in params);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
