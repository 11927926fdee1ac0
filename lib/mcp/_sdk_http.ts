/**
 * The MCP SDK's Streamable HTTP server transport, for `agent-bus http` alone
 * (see `_sdk.ts`, which holds the rest of the SDK's imports).
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
