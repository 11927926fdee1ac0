/**
 * Protocol-level requests (resources, prompts) name things the client
 * chose: a topic that does not exist is the client's mistake, answered as
 * JSON-RPC `InvalidParams`, not as an internal error.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { BusError } from "../errors.ts";

/** Run a lookup; a `BusError` (an unknown topic, …) becomes `InvalidParams`. */
export function known<T>(lookup: () => T): T {
  try {
    return lookup();
  } catch (error) {
    if (error instanceof BusError) throw new McpError(ErrorCode.InvalidParams, error.message);
    throw error;
  }
}
