/**
 * A stand-in for the Anthropic Messages API on loopback, so a real Claude
 * Code (`claude -p`, `ANTHROPIC_BASE_URL`) runs offline with a scripted
 * "model": each turn it calls the next scripted tool, and when the script is
 * done it answers with text. Every request and every tool result the client
 * sends back is recorded, with the time it arrived.
 *
 * @module
 */

import { type FakeModel, nextCall, type ScriptedCall, serveFakeModel } from "./fake_model.ts";

export type { FakeModel, ScriptedCall, SeenResult } from "./fake_model.ts";

/** The tool Claude Code offers while an MCP server is still connecting. */
const WAIT_TOOL = "WaitForMcpServers";
/** Its calls' ids, told apart from the script's. */
const WAIT_PREFIX = "toolu_wait_";
/**
 * How many times the model waits before giving up on its tools: Claude Code's
 * `WaitForMcpServers` waits up to 5 s a call, so a server has a minute.
 */
const MAX_WAITS = 12;

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/**
 * Serve a scripted model. A request that offers the first scripted tool and
 * has seen fewer results than the script has calls gets the next call;
 * every other request gets `finalText`.
 */
export function startFakeAnthropic(
  script: readonly ScriptedCall[],
  options: {
    finalText?: string;
    /** Awaited before each text answer to the agent's own requests (those offering tools). */
    beforeText?: () => Promise<void>;
  } = {},
): FakeModel {
  let count = 0;
  let waits = 0;
  return serveFakeModel(async (req, state) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/messages") return Response.json({});
    const body = JSON.parse(await req.text()) as {
      model?: string;
      stream?: boolean;
      tools?: { name: string }[];
      messages?: { role: string; content: unknown }[];
    };
    state.requests.push(body);
    state.requestTimes.push(performance.now());
    const seen = new Set(state.results.map((r) => r.toolUseId));
    for (const message of body.messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const part of message.content as Record<string, unknown>[]) {
        if (part.type !== "tool_result" || seen.has(String(part.tool_use_id))) continue;
        if (String(part.tool_use_id).startsWith(WAIT_PREFIX)) continue; // not a scripted call
        seen.add(String(part.tool_use_id));
        state.results.push({
          toolUseId: String(part.tool_use_id),
          text: flatten(part.content),
          isError: part.is_error === true,
          at: performance.now(),
        });
      }
    }
    const offered = (body.tools ?? []).map((tool) => tool.name);
    const offersTools = script.length > 0 && offered.includes(script[0]!.name);
    // A model asked to use agent-bus whose server is still starting waits for it, as Claude
    // Code invites it to, instead of answering without its tools.
    if (script.length > 0 && !offersTools && offered.includes(WAIT_TOOL) && waits < MAX_WAITS) {
      const id = `${WAIT_PREFIX}${++waits}`;
      return reply(
        body.model ?? "claude",
        { type: "tool_use", id, name: WAIT_TOOL, input: {} },
        body.stream === true,
        ++count,
      );
    }
    const next = offersTools ? nextCall(script, state, "toolu") : undefined;
    if (!next && offersTools) await options.beforeText?.();
    const block: Block = next
      ? { type: "tool_use", id: next.id, name: next.call.name, input: next.call.input }
      : { type: "text", text: options.finalText ?? "done" };
    return reply(body.model ?? "claude", block, body.stream === true, ++count);
  });
}

function flatten(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content.map((part) =>
    typeof part === "object" && part !== null && "text" in part
      ? String((part as { text: unknown }).text)
      : JSON.stringify(part)
  ).join("\n");
}

function reply(model: string, block: Block, stream: boolean, n: number): Response {
  const stop = block.type === "tool_use" ? "tool_use" : "end_turn";
  const message = {
    id: `msg_${n}`,
    type: "message",
    role: "assistant",
    model,
    content: [] as Block[],
    stop_reason: null as string | null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  };
  if (!stream) return Response.json({ ...message, content: [block], stop_reason: stop });
  const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
  const delta = block.type === "tool_use"
    ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
    : { type: "text_delta", text: block.text };
  const events: [string, unknown][] = [
    ["message_start", { type: "message_start", message }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 5 },
    }],
    ["message_stop", { type: "message_stop" }],
  ];
  const text = events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    .join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}
