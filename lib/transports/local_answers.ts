/**
 * What a front answers without its session's thread: a front (the thread
 * that owns a connection, while the session runs in a worker that may be
 * waiting for a stalled database) answers `ping` at once, and `tools/list`
 * from its profile (`toolListOf`: a session's tools need no database and
 * never change; `listChanged` is false), even before the session answered
 * one. Used by the stdio server's front and by the HTTP node's
 * (`http/node_pool.ts`).
 *
 * @module
 */

import type { JSONRPCMessage } from "../mcp/_sdk.ts";

type RequestLike = { id?: string | number; method?: string; params?: { cursor?: unknown } };

/** A request for the whole tool list (not a later page), told from any message. */
function isToolList(message: RequestLike): boolean {
  return message.id !== undefined && message.method === "tools/list" &&
    message.params?.cursor === undefined;
}

/**
 * The front's answer to `message`, or undefined when the session must answer.
 *
 * @param tools the session's answer to `tools/list`
 */
export function localAnswer(message: unknown, tools: unknown): JSONRPCMessage | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const request = message as RequestLike;
  if (request.id === undefined) return undefined;
  const result = request.method === "ping"
    ? {}
    : isToolList(request) && tools !== undefined
    ? tools
    : undefined;
  if (result === undefined) return undefined;
  return { jsonrpc: "2.0", id: request.id, result } as JSONRPCMessage;
}
