/**
 * MCP prompts for people: clients show them as commands (Claude Code as
 * `/mcp__agent-bus__join`, …). Each prompt is the instruction a person would
 * type, naming the exact tool calls; `catch_up` also carries the topic's
 * latest messages. Topic arguments complete to the names of open topics
 * (`completion/complete`).
 *
 * @module
 */

import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  McpError,
} from "../_sdk.ts";
import { findTopic, latestMessages, topicSummaries } from "../../bus/admin.ts";
import { exportMarkdown } from "../../bus/export.ts";
import type { Bus } from "../../bus/mod.ts";
import { known } from "../invalid_params.ts";
import type { ProtocolServer } from "../protocol_server.ts";
import type { Feature } from "./mod.ts";

/** The capabilities {@linkcode attachPrompts} serves. */
export const PROMPT_CAPABILITIES = { prompts: {}, completions: {} };

/** Longest prompt argument. */
export const MAX_PROMPT_ARGUMENT_CHARS = 200_000;
/** Messages `catch_up` carries. */
const CATCH_UP_MESSAGES = 50;
/** Most completions offered. */
const MAX_COMPLETIONS = 100;

const TOPIC = { name: "topic", description: "The topic's name", required: true };

/** One prompt: what `prompts/list` shows, and its text for the arguments given. */
interface PromptDef {
  name: string;
  description: string;
  arguments: { name: string; description: string; required: boolean }[];
  text(bus: Bus, arg: (name: string) => string, topic: string): string;
}

const PEER_PROMPTS: readonly PromptDef[] = [
  {
    name: "join",
    description: "Join a topic under a name and read what is new there",
    arguments: [TOPIC, { name: "name", description: "Your name in the topic", required: true }],
    text: (_bus, arg, topic) =>
      `Join the agent-bus topic ${topic} as ${JSON.stringify(arg("name"))}: call ` +
      `topic_join(agent_name=${JSON.stringify(arg("name"))}, name=${topic}), then ` +
      `sync(topic_id, wait_seconds=0) and tell me briefly what is new there.`,
  },
  {
    name: "catch_up",
    description: "Catch up on a topic: read what is new and summarise it",
    arguments: [TOPIC],
    text(bus, arg, topic) {
      const found = known(() => findTopic(bus, arg("topic")));
      const recent = exportMarkdown(found, latestMessages(bus, found.topic_id, CATCH_UP_MESSAGES));
      return `Catch up on the agent-bus topic ${topic} (topic_id ${found.topic_id}): call ` +
        `sync(topic_id="${found.topic_id}", wait_seconds=0) until has_more is false (join it ` +
        `first with topic_join if you have not), then summarise what is new: decisions, ` +
        `questions to you, and what is still open.\n\nIts latest messages:\n\n${recent}`;
    },
  },
  {
    name: "ask",
    description: "Ask a question on a topic and wait for the answers",
    arguments: [TOPIC, { name: "question", description: "The question", required: true }],
    text: (_bus, arg, topic) =>
      `Ask on the agent-bus topic ${topic}: resolve it with topic_resolve(name=${topic}) ` +
      `(join with topic_join if you have not), post the question below with ` +
      `sync(topic_id, outbox=[{content_markdown: <the question>, message_type: "question"}], ` +
      `wait_seconds=60), and keep calling sync until an answer arrives; then tell me it.\n\n` +
      `Question:\n${arg("question")}`,
  },
];

const TEACHER_PROMPTS: readonly PromptDef[] = [{
  name: "answer_queue",
  description: "Answer the students' questions waiting on a topic",
  arguments: [TOPIC],
  text: (_bus, _arg, topic) =>
    `Answer the questions waiting on the topic ${topic}: resolve it with ` +
    `topic_resolve(name=${topic}), call teacher_drain(topic_id) to take the pending ` +
    `questions, answer each from what you know of this repository, and publish the ` +
    `answers with teacher_publish(topic_id, responses=[…]). Repeat until the queue is empty.`,
}];

/** Serve the prompts `defs` on `server`, with completions of topic names. */
export function attachPrompts(server: ProtocolServer, bus: Bus, defs: readonly PromptDef[]): void {
  const prompts = defs.map(({ text: _, ...listed }) => listed);
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const def = defs.find((d) => d.name === request.params.name);
    if (!def) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown prompt ${request.params.name.slice(0, 100)}`,
      );
    }
    const arg = promptArguments(request.params.arguments);
    const text = def.text(bus, arg, JSON.stringify(arg("topic")));
    return { messages: [{ role: "user" as const, content: { type: "text" as const, text } }] };
  });
  server.setRequestHandler(CompleteRequestSchema, (request) => {
    const { ref, argument } = request.params;
    if (ref.type !== "ref/prompt" || argument.name !== "topic") {
      return { completion: { values: [] } };
    }
    const prefix = argument.value.slice(0, 200).toLowerCase();
    const names = [
      ...new Set(
        topicSummaries(bus, { status: "open", sort: "activity", limit: 1000 })
          .map((t) => t.name)
          .filter((name) => name.toLowerCase().startsWith(prefix)),
      ),
    ];
    return {
      completion: {
        values: names.slice(0, MAX_COMPLETIONS),
        total: names.length,
        hasMore: names.length > MAX_COMPLETIONS,
      },
    };
  });
}

/**
 * A reader of a prompt's arguments: `arg(name)` is the string value, and an
 * `InvalidParams` error when a required one is missing, blank or too long.
 */
export function promptArguments(
  args: Record<string, string> | undefined,
): (name: string, required?: boolean) => string {
  return (name, required = true) => {
    const value = args?.[name];
    if (value === undefined && !required) return "";
    if (typeof value !== "string" || (required && !value.trim())) {
      throw new McpError(ErrorCode.InvalidParams, `Argument ${name} is required`);
    }
    if (value.length > MAX_PROMPT_ARGUMENT_CHARS) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Argument ${name} exceeds max length (${MAX_PROMPT_ARGUMENT_CHARS})`,
      );
    }
    return value;
  };
}

/** The peer profile's prompts: join, catch up, ask. */
export const peerPrompts: Feature = promptsFeature("peer prompts", PEER_PROMPTS);
/** The teacher profile's prompt: answer the queue. */
export const teacherPrompts: Feature = promptsFeature("teacher prompts", TEACHER_PROMPTS);

function promptsFeature(name: string, defs: readonly PromptDef[]): Feature {
  return {
    name,
    capabilities: () => PROMPT_CAPABILITIES,
    attach(server, { bus }) {
      attachPrompts(server, bus, defs);
      return () => {};
    },
  };
}
