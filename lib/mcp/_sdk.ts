/**
 * The MCP SDK, as the rest of the program sees it: every import of
 * `@modelcontextprotocol/sdk` and its `@ts-types` pragmas are here (the
 * SDK's `.js` entry points carry no types of their own for Deno), so the
 * modules that speak MCP import what they use from this one place. The
 * Streamable HTTP server transport is the one exception, in `_sdk_http.ts`:
 * re-exported here it would be loaded by every stdio server too.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/types"
export * from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/shared/protocol"
export { Protocol, type RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
