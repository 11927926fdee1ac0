/**
 * Protocol-level requests (resources, prompts) name things the client
 * chose: a topic that does not exist, or a malformed argument, is the
 * client's mistake, answered as JSON-RPC `InvalidParams`. Anything else the
 * bus reports (`DB_BUSY`, `DB_UNAVAILABLE`, …) is the server's trouble, not
 * the client's: it is answered as `InternalError`, and in both cases the bus
 * code travels in `data.code` so a client can tell a busy database from a
 * wrong name.
 *
 * @module
 */

import { ErrorCode, McpError } from "./_sdk.ts";
import { BusError, type ErrorCode as BusCode } from "../errors.ts";

/** MCP's code for a resource URI the server does not have. */
export const RESOURCE_NOT_FOUND = -32002;

/** Codes that mean the client named something wrong or asked for something malformed. */
const CLIENT_MISTAKES = new Set<BusCode>([
  "INVALID_ARGUMENT",
  "NOT_FOUND",
  "TOPIC_NOT_FOUND",
  "THREAD_NOT_FOUND",
  "MESSAGE_NOT_FOUND",
  "QUESTION_NOT_FOUND",
  "TEMPLATE_NOT_FOUND",
]);

/**
 * Run a lookup; a `BusError` becomes a JSON-RPC error: `InvalidParams` for
 * the client's mistakes (an unknown topic, …), `InternalError` for the rest,
 * each with `data.code` set to the bus code.
 */
export function known<T>(lookup: () => T): T {
  try {
    return lookup();
  } catch (error) {
    if (!(error instanceof BusError)) throw error;
    const kind = CLIENT_MISTAKES.has(error.code)
      ? ErrorCode.InvalidParams
      : ErrorCode.InternalError;
    throw new McpError(kind, error.message, { code: error.code });
  }
}

/** The error for a resource URI this server does not serve. */
export function unknownResource(uri: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Unknown resource ${uri}`, { uri });
}
