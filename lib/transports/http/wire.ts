/**
 * The JSON-RPC side of the HTTP server: reading a request body within its
 * size limit, telling an MCP message from the curl shorthand
 * (`{"tool", "args"}`), and the one mapper of refusals to JSON-RPC error
 * responses on MCP routes (the console's routes answer `{error}` bodies,
 * see `console/respond.ts`).
 *
 * @module
 */

import { isInitializeRequest } from "../../mcp/_sdk.ts";
import { bodyUnreadable, readCappedBody } from "../../http_respond.ts";

/** A parsed body, or the refusal to answer with. */
export type Body = { value: unknown } | { status: 400 | 413; code: number; message: string };

/** Read and parse a JSON body, refusing it unread when it is too large. */
export async function readJson(request: Request, maxBytes: number): Promise<Body> {
  const tooLarge = {
    status: 413,
    code: -32000,
    message: `Request body exceeds ${maxBytes} bytes`,
  } as const;
  const length = request.headers.get("content-length");
  if (length !== null && Number(length) > maxBytes) return tooLarge;
  // A declared length is enforced by the HTTP layer, so the body can be taken whole;
  // a chunked body is counted as it streams.
  let bytes: Uint8Array | undefined;
  try {
    bytes = length !== null
      ? new Uint8Array(await request.arrayBuffer())
      : await readCappedBody(request, maxBytes);
  } catch (error) {
    // The client went away mid-body: a bad request that nobody will read, not a server fault.
    return { status: 400, code: -32700, message: bodyUnreadable(error).message };
  }
  if (bytes === undefined) return tooLarge;
  try {
    return { value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch {
    return { status: 400, code: -32700, message: "Parse error: the body is not JSON" };
  }
}

/** A POST of `{"tool", "args"}` without `jsonrpc`: one tool call, no session. */
export function isShorthand(value: unknown): value is { tool: string; args?: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    !("jsonrpc" in value) && typeof (value as { tool?: unknown }).tool === "string";
}

/** True when `value` (or a batch) holds an `initialize` request. */
export function startsSession(value: unknown): boolean {
  return Array.isArray(value) ? value.some(isInitializeRequest) : isInitializeRequest(value);
}

/** A JSON-RPC error response (`id: null`) with an HTTP status. */
export function rpcError(
  status: number,
  code: number,
  message: string,
  headers: HeadersInit = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}
