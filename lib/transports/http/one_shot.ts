/**
 * AgentChatBus's one-shot MCP endpoint, `POST /mcp/messages`: one JSON-RPC
 * request (`{id?, method, params?}`, `jsonrpc` optional) without a session,
 * answered as `{result}` (or `400 {error, detail}` for a JSON-RPC error, and
 * `204` for a notification). Each request gets a server of its own, in the
 * SDK's stateless mode, so it answers exactly as `/mcp` would; nothing is
 * kept between requests (AgentChatBus shared one session among all its
 * callers: a tool that needs an agent takes its `agent_id` and `token`).
 *
 * @module
 */

import { WebStandardStreamableHTTPServerTransport } from "../../mcp/_sdk_http.ts";
import { createServer, type ServerDeps } from "../../mcp/server.ts";
import type { Profile } from "../../mcp/profiles/mod.ts";

/** The paths of the endpoint. */
export const ONE_SHOT_PATHS: ReadonlySet<string> = new Set(["/mcp/messages", "/mcp/messages/"]);

/**
 * Answer one request of `/mcp/messages` with `profile`'s server.
 *
 * @param request what the client sent: its parsed JSON `body`, where it reached us (for tools
 *   that say so), and the `signal` that aborts when it goes away (a `msg_wait` then ends, and
 *   its agent stops showing as waiting, instead of running on to its timeout)
 */
export async function answerOneShot(
  profile: Profile,
  deps: ServerDeps,
  request: { body: unknown; endpoint: string; signal: AbortSignal },
): Promise<Response> {
  const { body, endpoint } = request;
  const call = body as { id?: unknown; method?: unknown; params?: unknown } | null;
  if (typeof call !== "object" || call === null || typeof call.method !== "string") {
    return Response.json({ error: "INVALID_REQUEST", detail: "method is required" }, {
      status: 400,
    });
  }
  const notification = call.method.startsWith("notifications/");
  const id = typeof call.id === "string" || typeof call.id === "number" ? call.id : 1;
  const message = {
    jsonrpc: "2.0",
    method: call.method,
    ...(call.params === undefined ? {} : { params: call.params }),
    ...(notification ? {} : { id }),
  };
  const created = createServer(profile, deps, { endpoint });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // When the client goes, the server is closed, which aborts the call it runs; the call then
  // has no answer to wait for, so none is waited for.
  const { promise: gone, resolve: leave } = Promise.withResolvers<undefined>();
  const clientLeft = () => {
    leave(undefined);
    void created.close();
  };
  request.signal.addEventListener("abort", clientLeft, { once: true });
  try {
    await created.server.connect(transport);
    const response = await Promise.race([
      gone,
      transport.handleRequest(
        new Request("http://one-shot/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify(message),
        }),
        { parsedBody: message },
      ),
    ]);
    if (response === undefined) return new Response(null, { status: 499 }); // (read by nobody)
    if (notification) {
      await response.body?.cancel();
      return new Response(null, { status: 204 });
    }
    const text = await response.text();
    let answer: { result?: unknown; error?: { message?: string } };
    try {
      answer = JSON.parse(text);
    } catch {
      return new Response(text, { status: response.status, headers: response.headers });
    }
    if (answer.error !== undefined) {
      return Response.json({ error: answer.error.message ?? "MCP_ERROR", detail: answer }, {
        status: 400,
      });
    }
    return Response.json({ result: answer.result });
  } finally {
    request.signal.removeEventListener("abort", clientLeft);
    await created.close();
  }
}
