/**
 * A stand-in for the OpenAI Responses API on loopback, so a real Codex
 * (`codex exec` with a custom model provider) runs offline with a scripted
 * "model": each turn it calls the next scripted tool, then answers with
 * text. Codex offers an MCP server's tools as one namespace
 * (`mcp__agent_bus`) whose functions keep their own names; a call names the
 * function and the namespace. Tool outputs Codex sends back are recorded.
 *
 * @module
 */

import { type FakeModel, nextCall, type ScriptedCall, serveFakeModel } from "./fake_model.ts";

/**
 * Serve a scripted model. `script[i].name` is `namespace/function`
 * (`mcp__agent_bus/sync`).
 */
export function startFakeOpenAI(
  script: readonly ScriptedCall[],
  options: {
    /** Awaited before each text answer (the script is done). */
    beforeText?: () => Promise<void>;
  } = {},
): FakeModel {
  let count = 0;
  return serveFakeModel(async (req, state) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || !url.pathname.endsWith("/responses")) return Response.json({});
    const body = JSON.parse(await req.text()) as { input?: Record<string, unknown>[] };
    state.requests.push(body);
    state.requestTimes.push(performance.now());
    const seen = new Set(state.results.map((r) => r.toolUseId));
    for (const item of body.input ?? []) {
      if (item.type !== "function_call_output" || seen.has(String(item.call_id))) continue;
      seen.add(String(item.call_id));
      state.results.push({
        toolUseId: String(item.call_id),
        text: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
        isError: false,
        at: performance.now(),
      });
    }
    const n = ++count;
    const next = nextCall(script, state, "call");
    let item: Record<string, unknown>;
    if (next) {
      const [namespace, name] = next.call.name.split("/", 2);
      item = {
        type: "function_call",
        id: `fc_${n}`,
        call_id: next.id,
        name,
        namespace,
        arguments: JSON.stringify(next.call.input),
        status: "completed",
      };
    } else {
      await options.beforeText?.();
      item = {
        type: "message",
        id: `msg_${n}`,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "done", annotations: [] }],
      };
    }
    const usage = {
      input_tokens: 1,
      output_tokens: 1,
      total_tokens: 2,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    };
    const events = [
      {
        type: "response.created",
        response: { id: `resp_${n}`, status: "in_progress", output: [] },
      },
      { type: "response.output_item.added", output_index: 0, item },
      { type: "response.output_item.done", output_index: 0, item },
      {
        type: "response.completed",
        response: { id: `resp_${n}`, status: "completed", output: [item], usage },
      },
    ];
    return new Response(
      events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
}
