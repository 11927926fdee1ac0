/**
 * A bounded MCP stdio transport (newline-delimited JSON-RPC).
 *
 * The SDK's `StdioServerTransport` closes the whole connection when one line
 * exceeds its buffer, and never notices that stdin ended, so a server whose
 * client died could linger for as long as a `sync` waits. This transport:
 *
 * - drops an oversized line, answering its request (when an id can be read
 *   from the line's start) with a JSON-RPC error, and keeps serving;
 * - answers a line that is not JSON with a JSON-RPC parse error;
 * - reports end of input through `onclose`, so the process can exit.
 *
 * Streams are injectable for tests; the defaults are the process's stdio.
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** Options of {@linkcode StdioTransport}. */
export interface StdioTransportOptions {
  stdin?: ReadableStream<Uint8Array>;
  stdout?: WritableStream<Uint8Array>;
  /** Longest accepted line in bytes. */
  maxLineBytes: number;
}

const NEWLINE = 0x0a;

/** JSON-RPC over stdin/stdout, one message per line. */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #maxLineBytes: number;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #closed = false;

  constructor(options: StdioTransportOptions) {
    this.#stdin = options.stdin ?? Deno.stdin.readable;
    this.#writer = (options.stdout ?? Deno.stdout.writable).getWriter();
    this.#maxLineBytes = options.maxLineBytes;
  }

  /** Start reading stdin in the background. */
  start(): Promise<void> {
    this.#reader = this.#stdin.getReader();
    this.#readLoop().catch((error) => this.onerror?.(asError(error))).finally(() => this.close());
    return Promise.resolve();
  }

  /** Write one message as a line. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    await this.#writer.write(this.#encoder.encode(JSON.stringify(message) + "\n"));
  }

  /** Stop reading and report the close once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#reader?.cancel().catch(() => {});
    this.onclose?.();
  }

  async #readLoop(): Promise<void> {
    const reader = this.#reader!;
    let parts: Uint8Array[] = [];
    let size = 0;
    let dropping: Uint8Array | undefined; // head of an oversized line being skipped
    for (;;) {
      const { value, done } = await reader.read();
      if (done || this.#closed) return;
      let chunk = value;
      for (;;) {
        const cut = chunk.indexOf(NEWLINE);
        const piece = cut === -1 ? chunk : chunk.subarray(0, cut);
        if (dropping) {
          if (cut !== -1) {
            this.#reject(dropping);
            dropping = undefined;
          }
        } else if (size + piece.length > this.#maxLineBytes) {
          dropping = concat([...parts, piece]).subarray(0, 256);
          parts = [];
          size = 0;
          if (cut !== -1) {
            this.#reject(dropping);
            dropping = undefined;
          }
        } else {
          parts.push(piece);
          size += piece.length;
          if (cut !== -1) {
            this.#handleLine(concat(parts));
            parts = [];
            size = 0;
          }
        }
        if (cut === -1) break;
        chunk = chunk.subarray(cut + 1);
      }
    }
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
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.#replyError(idOf(json), -32600, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #reject(head: Uint8Array): void {
    const match = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})/.exec(
      this.#decoder.decode(head),
    );
    const id = match ? JSON.parse(match[1]!) as string | number : null;
    this.#replyError(
      id,
      -32600,
      `Request too large: lines are limited to ${this.#maxLineBytes} bytes`,
    );
  }

  #replyError(id: string | number | null, code: number, message: string): void {
    const reply = { jsonrpc: "2.0", id, error: { code, message } };
    this.#writer.write(this.#encoder.encode(JSON.stringify(reply) + "\n")).catch((error) =>
      this.onerror?.(asError(error))
    );
  }
}

function idOf(json: unknown): string | number | null {
  if (json === null || typeof json !== "object") return null;
  const id = (json as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
