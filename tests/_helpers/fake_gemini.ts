/**
 * A stand-in for the Gemini API on loopback, so a real Gemini CLI
 * (`gemini -p`, `GOOGLE_GEMINI_BASE_URL`) runs offline with a scripted
 * "model": each turn it calls the next scripted tool, then answers with
 * text. Gemini CLI names an MCP server's tools `mcp_<server>_<tool>` and
 * sends a result back as a `functionResponse` carrying the tool's text.
 *
 * @module
 */

import { type FakeModel, nextCall, type ScriptedCall, serveFakeModel } from "./fake_model.ts";

/** Serve a scripted model for Gemini CLI. */
export function startFakeGemini(
  script: readonly ScriptedCall[],
  options: { beforeText?: () => Promise<void> } = {},
): FakeModel {
  return serveFakeModel(async (req, state) => {
    const url = new URL(req.url);
    if (req.method !== "POST") return Response.json({});
    const body = JSON.parse(await req.text()) as {
      contents?: { parts?: Record<string, unknown>[] }[];
      tools?: { functionDeclarations?: { name: string }[] }[];
    };
    state.requests.push(body);
    state.requestTimes.push(performance.now());
    const seen = new Set(state.results.map((r) => r.toolUseId));
    for (const content of body.contents ?? []) {
      for (const part of content.parts ?? []) {
        const response = part.functionResponse as
          | { id?: string; name: string; response: Record<string, unknown> }
          | undefined;
        const id = response?.id ?? response?.name;
        if (!response || !id || seen.has(id)) continue;
        seen.add(id);
        const output = response.response.output ?? response.response.error ?? response.response;
        state.results.push({
          toolUseId: id,
          text: typeof output === "string" ? output : JSON.stringify(output),
          isError: "error" in response.response,
          at: performance.now(),
        });
      }
    }
    // Results come back under Gemini CLI's own ids; calls are matched to them by order.
    // Only the agent's own turns (those offering the tools) get calls; side requests (routing,
    // next-speaker checks) get text.
    const offersTools = script.length > 0 &&
      (body.tools ?? []).some((tool) =>
        (tool.functionDeclarations ?? []).some((f) => f.name === script[0]!.name)
      );
    const next = offersTools ? nextCall(script, state, "call") : undefined;
    if (!next && offersTools) await options.beforeText?.();
    const part = next
      ? { functionCall: { name: next.call.name, args: next.call.input } }
      : { text: "done" };
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
}
