/**
 * MCP prompts for people: clients show them as commands (Claude Code as
 * `/mcp__agent-bus__join`, …). Each prompt is the instruction a person would
 * type, naming the exact tool calls; `catch_up` also carries the topic's
 * latest messages. Topic arguments complete to the names of open topics
 * (`completion/complete`).
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { findTopic, latestMessages, topicSummaries } from "../bus/admin.ts";
import { exportMarkdown } from "../bus/export.ts";
import type { Bus } from "../bus/mod.ts";
import { known } from "./invalid_params.ts";
import type { ProtocolServer } from "./protocol_server.ts";

/** The capabilities {@linkcode attachPrompts} serves. */
export const PROMPT_CAPABILITIES = { prompts: {}, completions: {} };

/** Longest prompt argument. */
export const MAX_PROMPT_ARGUMENT_CHARS = 200_000;
/** Messages `catch_up` carries. */
const CATCH_UP_MESSAGES = 50;
/** Most completions offered. */
const MAX_COMPLETIONS = 100;

const TOPIC = { name: "topic", description: "The topic's name", required: true };

const PEER_PROMPTS = [
  {
    name: "join",
    description: "Join a topic under a name and read what is new there",
    arguments: [TOPIC, { name: "name", description: "Your name in the topic", required: true }],
  },
  {
    name: "catch_up",
    description: "Catch up on a topic: read what is new and summarise it",
    arguments: [TOPIC],
  },
  {
    name: "ask",
    description: "Ask a question on a topic and wait for the answers",
    arguments: [TOPIC, { name: "question", description: "The question", required: true }],
  },
];

const TEACHER_PROMPTS = [{
  name: "answer_queue",
  description: "Answer the students' questions waiting on a topic",
  arguments: [TOPIC],
}];

/** Serve the prompts of the peer (or teacher) profile on `server`. */
export function attachPrompts(server: ProtocolServer, bus: Bus, role: "peer" | "teacher"): void {
  const prompts = role === "teacher" ? TEACHER_PROMPTS : PEER_PROMPTS;
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const arg = promptArguments(request.params.arguments);
    const user = (text: string) => ({
      messages: [{ role: "user" as const, content: { type: "text" as const, text } }],
    });
    const topic = JSON.stringify(arg("topic"));
    switch (role === "teacher" ? `teacher:${request.params.name}` : request.params.name) {
      case "join":
        return user(
          `Join the agent-bus topic ${topic} as ${JSON.stringify(arg("name"))}: call ` +
            `topic_join(agent_name=${JSON.stringify(arg("name"))}, name=${topic}), then ` +
            `sync(topic_id, wait_seconds=0) and tell me briefly what is new there.`,
        );
      case "catch_up": {
        const found = known(() => findTopic(bus, arg("topic")));
        const recent = exportMarkdown(
          found,
          latestMessages(bus, found.topic_id, CATCH_UP_MESSAGES),
        );
        return user(
          `Catch up on the agent-bus topic ${topic} (topic_id ${found.topic_id}): call ` +
            `sync(topic_id="${found.topic_id}", wait_seconds=0) until has_more is false (join it ` +
            `first with topic_join if you have not), then summarise what is new: decisions, ` +
            `questions to you, and what is still open.\n\nIts latest messages:\n\n${recent}`,
        );
      }
      case "ask":
        return user(
          `Ask on the agent-bus topic ${topic}: resolve it with topic_resolve(name=${topic}) ` +
            `(join with topic_join if you have not), post the question below with ` +
            `sync(topic_id, outbox=[{content_markdown: <the question>, message_type: "question"}], ` +
            `wait_seconds=60), and keep calling sync until an answer arrives; then tell me it.\n\n` +
            `Question:\n${arg("question")}`,
        );
      case "teacher:answer_queue":
        return user(
          `Answer the questions waiting on the topic ${topic}: resolve it with ` +
            `topic_resolve(name=${topic}), call teacher_drain(topic_id) to take the pending ` +
            `questions, answer each from what you know of this repository, and publish the ` +
            `answers with teacher_publish(topic_id, responses=[…]). Repeat until the queue is empty.`,
        );
      default:
        throw new McpError(
          ErrorCode.InvalidParams,
          `Unknown prompt ${request.params.name.slice(0, 100)}`,
        );
    }
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
