/**
 * A stand-in for the Gemini API on loopback, so a real Gemini CLI
 * (`gemini -p`, `GOOGLE_GEMINI_BASE_URL`) runs offline with a scripted
 * "model": each turn it calls the next scripted tool, then answers with
 * text. Gemini CLI names an MCP server's tools `mcp_<server>_<tool>` and
 * sends a result back as a `functionResponse` carrying the tool's text.
 *
 * @module
 */

import type { FakeModel, ScriptedCall, SeenResult } from "./fake_anthropic.ts";

/** Serve a scripted model for Gemini CLI. */
export function startFakeGemini(script: readonly ScriptedCall[]): FakeModel {
  const results: SeenResult[] = [];
  const calledAt = new Map<string, number>();
  const requests: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST") return Response.json({});
    const body = JSON.parse(await req.text()) as {
      contents?: { parts?: Record<string, unknown>[] }[];
    };
    requests.push(body);
    const seen = new Set(results.map((r) => r.toolUseId));
    for (const content of body.contents ?? []) {
      for (const part of content.parts ?? []) {
        const response = part.functionResponse as
          | { id?: string; name: string; response: Record<string, unknown> }
          | undefined;
        const id = response?.id ?? response?.name;
        if (!response || !id || seen.has(id)) continue;
        seen.add(id);
        const output = response.response.output ?? response.response.error ?? response.response;
        results.push({
          toolUseId: id,
          text: typeof output === "string" ? output : JSON.stringify(output),
          isError: "error" in response.response,
          at: performance.now(),
        });
      }
    }
    const next = script[results.length];
    const key = `call_${results.length}`;
    let part: Record<string, unknown>;
    if (next && !calledAt.has(key)) {
      calledAt.set(key, performance.now());
      part = { functionCall: { name: next.name, args: next.input } };
    } else {
      part = { text: "done" };
    }
    // Results come back under Gemini CLI's own ids: map them to the order of calls.
    const chunk = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1, totalTokenCount: 6 },
    };
    return url.search.includes("alt=sse")
      ? new Response(`data: ${JSON.stringify(chunk)}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      })
      : Response.json(chunk);
  });
  const { port } = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${port}`,
    results,
    calledAt,
    requests,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
