/**
 * The messages between a stdio server's front (the main thread, which owns
 * stdin and stdout) and its session worker (which runs the MCP server and
 * the bus), and the worker's side of the MCP transport they make.
 *
 * @module
 */

import { type JSONRPCMessage, type Transport } from "../mcp/_sdk.ts";
import type { StdioSessionOptions } from "./stdio_session.ts";

/** A session's options as they cross to the worker: plain data, the profile by its name. */
export type StartOptions = Omit<StdioSessionOptions, "profile"> & { profile: string };

/** What the front tells the worker. */
export type ToWorker =
  | { kind: "start"; options: StartOptions }
  | { kind: "message"; message: JSONRPCMessage }
  | { kind: "stop" };

/** What the worker tells the front. */
export type FromWorker =
  | { kind: "message"; message: JSONRPCMessage }
  | { kind: "closed" };

/**
 * The worker's side of the MCP transport: messages come from the front and
 * go back to it. Messages that arrive before the server has connected wait
 * for it.
 */
export class WorkerSideTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #post: (message: FromWorker) => void;
  #waiting: JSONRPCMessage[] | undefined = [];
  #closed = false;

  constructor(post: (message: FromWorker) => void) {
    this.#post = post;
  }

  start(): Promise<void> {
    const waiting = this.#waiting ?? [];
    this.#waiting = undefined;
    for (const message of waiting) this.onmessage?.(message);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#closed) this.#post({ kind: "message", message });
    return Promise.resolve();
  }

  /** A message from the front. */
  deliver(message: JSONRPCMessage): void {
    if (this.#waiting) this.#waiting.push(message);
    else this.onmessage?.(message);
  }

  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.onclose?.();
    }
    return Promise.resolve();
  }
}
