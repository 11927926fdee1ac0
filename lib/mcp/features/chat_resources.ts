/**
 * The chatbus dialect's MCP resources and prompts (research 2.4), as
 * AgentChatBus offers them: `chat://bus/config`, `chat://agents/active`,
 * `chat://threads/active`, and per thread `chat://threads/{id}/transcript`,
 * `/state` and `/summary` (listed as templates, readable by URI); the
 * prompts `summarize_thread` and `handoff_to_agent`.
 *
 * A transcript holds the thread's latest {@linkcode TRANSCRIPT_MESSAGES}
 * messages, and prompt arguments are bounded, so no read is unbounded.
 *
 * @module
 */

import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "../_sdk.ts";
import { agentList } from "../../bus/chat/agents.ts";
import { busConfig } from "../../bus/chat/connect.ts";
import { transcript } from "../../bus/chat/read.ts";
import { threadGet, threadLatestSeq, threadList } from "../../bus/chat/threads.ts";
import type { Bus } from "../../bus/mod.ts";
import { known, unknownResource } from "../invalid_params.ts";
import { promptArguments } from "./prompts.ts";
import type { ProtocolServer } from "../protocol_server.ts";
import type { Feature } from "./mod.ts";

/** Most messages a transcript resource holds (the latest ones). */
export const TRANSCRIPT_MESSAGES = 100;

const THREAD_RESOURCE = /^chat:\/\/threads\/([^/]{1,64})\/(transcript|state|summary)$/;

const PROMPTS = [
  {
    name: "summarize_thread",
    description: "Summarize a thread: its decisions, conclusions and open questions",
    arguments: [
      { name: "topic", description: "The thread's topic", required: true },
      { name: "transcript", description: "The thread's transcript", required: true },
    ],
  },
  {
    name: "handoff_to_agent",
    description: "Hand a task over to another agent",
    arguments: [
      { name: "from_agent", description: "Who hands the task over", required: true },
      { name: "to_agent", description: "Who takes it", required: true },
      { name: "task_description", description: "The task", required: true },
      { name: "context", description: "What the other agent needs to know", required: false },
    ],
  },
];

/** The capabilities {@linkcode attachChatResources} serves. */
export const CHAT_CAPABILITIES = { resources: {}, prompts: {} };

/** The resources `resources/list` names. */
const RESOURCES = [
  { uri: "chat://bus/config", name: "Bus configuration", mimeType: "application/json" },
  { uri: "chat://agents/active", name: "Agents online now", mimeType: "application/json" },
  {
    uri: "chat://threads/active",
    name: "Threads not closed or archived",
    mimeType: "application/json",
  },
];

/** The per-thread resources, as templates. */
const RESOURCE_TEMPLATES = [
  {
    uriTemplate: "chat://threads/{thread_id}/transcript",
    name: "A thread's transcript (latest messages), one line per message",
    mimeType: "text/plain",
  },
  {
    uriTemplate: "chat://threads/{thread_id}/state",
    name: "A thread's status and latest seq",
    mimeType: "application/json",
  },
  {
    uriTemplate: "chat://threads/{thread_id}/summary",
    name: "A thread's closing summary",
    mimeType: "text/plain",
  },
];

/** Serve the chatbus resources and prompts on `server`. */
export function attachChatResources(server: ProtocolServer, bus: Bus, endpoint: string): void {
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const uri = request.params.uri;
    const { body, mimeType } = readChatResource(bus, endpoint, uri);
    return { contents: [{ uri, mimeType, text: body }] };
  });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const text = promptText(request.params.name, promptArguments(request.params.arguments));
    return { messages: [{ role: "user" as const, content: { type: "text" as const, text } }] };
  });
}

/**
 * The resource at `uri`: its text and type.
 *
 * @throws {McpError} for a URI that names no resource, or a thread that does not exist
 */
function readChatResource(
  bus: Bus,
  endpoint: string,
  uri: string,
): { body: string; mimeType: string } {
  const json = (value: unknown) => ({ body: JSON.stringify(value), mimeType: "application/json" });
  const text = (body: string) => ({ body, mimeType: "text/plain" });
  if (uri === "chat://bus/config") return json(busConfig(bus, endpoint));
  if (uri === "chat://agents/active") return json(agentList(bus).filter((a) => a.is_online));
  if (uri === "chat://threads/active") {
    return json(threadList(bus, {}).threads.filter((t) => t.status !== "closed"));
  }
  const match = uri.length <= 200 ? THREAD_RESOURCE.exec(uri) : null;
  if (!match) throw unknownResource(uri.slice(0, 200));
  const [, threadId, part] = match;
  const thread = known(() => ({
    ...threadGet(bus, threadId!),
    latest_seq: threadLatestSeq(bus, threadId!),
  }));
  if (part === "summary") return text(thread.summary ?? "");
  if (part === "state") {
    return json({
      thread_id: thread.thread_id,
      topic: thread.topic,
      status: thread.status,
      latest_seq: thread.latest_seq,
      created_at: thread.created_at,
    });
  }
  return text(transcript(bus, thread.thread_id, TRANSCRIPT_MESSAGES));
}

/**
 * The text of the prompt `name` with its arguments (`arg`, bounded).
 *
 * @throws {McpError} `InvalidParams` for a prompt that does not exist
 */
function promptText(name: string, arg: ReturnType<typeof promptArguments>): string {
  if (name === "summarize_thread") {
    return `Summarize the thread "${arg("topic")}". List the decisions made, the conclusions ` +
      `reached, and the questions still open, each with who raised it.\n\n` +
      `Transcript:\n${arg("transcript")}`;
  }
  if (name === "handoff_to_agent") {
    const context = arg("context", false);
    return `${arg("from_agent")} hands this task to ${arg("to_agent")}:\n\n${
      arg("task_description")
    }` +
      (context ? `\n\nContext:\n${context}` : "") +
      `\n\n${arg("to_agent")}: confirm in the thread that you take it, then report progress there.`;
  }
  throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${name.slice(0, 100)}`);
}

/** Threads, agents and the bus's configuration as resources, and the chat prompts (chatbus). */
export const chatResources: Feature = {
  name: "chat resources",
  capabilities: () => CHAT_CAPABILITIES,
  attach(server, { bus, endpoint }) {
    attachChatResources(server, bus, endpoint);
    return () => {};
  },
};
