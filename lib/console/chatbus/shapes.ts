/**
 * The objects of the AgentChatBus dialect as AgentChatBus's REST API and
 * event stream show them (its TS server, read for this): each carries its
 * `id` beside our `thread_id`, `msg_id` or `agent_id`, and a message its
 * images in `metadata.images`, where AgentChatBus's clients look for them.
 * Shared by the routes and `events.ts`, so a thread, message
 * or agent looks the same in an answer and in an event.
 *
 * @module
 */

import { z } from "zod";
import type { AgentInfo } from "../../bus/chat/agents.ts";
import { imageLinks } from "../../bus/chat/attachments.ts";
import type { Thread } from "../../bus/chat/threads.ts";
import type { ChatMessage } from "../../bus/chat/wire.ts";
import type { TopicSummary } from "../../bus/admin.ts";
import { agentSchema, chatMessageSchema, threadSchema } from "../../bus/chat/schemas.ts";

/** {@linkcode restThread}'s answer, for the routes' schemas. */
export const restThreadSchema = threadSchema.extend({ id: z.string() });
/** {@linkcode restAgent}'s answer. */
export const restAgentSchema = agentSchema.extend({ id: z.string() });
/** {@linkcode restMessage}'s answer (its images in `metadata.images`). */
export const restMessageSchema = chatMessageSchema.extend({ id: z.string() });

/** A thread as AgentChatBus's REST shows it: its `id` beside ours. */
export function restThread(thread: Thread): Thread & { id: string } {
  return { id: thread.thread_id, ...thread };
}

/** An agent as AgentChatBus's REST shows it. */
export function restAgent(agent: AgentInfo): AgentInfo & { id: string } {
  return { id: agent.agent_id, ...agent };
}

/**
 * A message as AgentChatBus's REST shows it: its `id` beside ours, and its
 * images in `metadata.images` ({url, name}).
 */
export function restMessage(message: ChatMessage): ChatMessage & { id: string } {
  const images = imageLinks(message.msg_id, message.metadata);
  const metadata = images.length === 0 ? message.metadata : { ...message.metadata, images };
  return { id: message.msg_id, ...message, metadata };
}

/** A thread as AgentChatBus's events carry it, from the console's topic summary. */
export function threadOfSummary(topic: TopicSummary) {
  const iso = (seconds: number | null) =>
    seconds === null ? null : new Date(seconds * 1000).toISOString();
  return {
    id: topic.topic_id,
    thread_id: topic.topic_id,
    topic: topic.name,
    status: topic.status === "closed" ? "closed" : topic.thread_state ?? "discuss",
    created_at: iso(topic.created_at),
    closed_at: iso(topic.closed_at),
    summary: topic.close_reason,
    metadata: topic.metadata,
    last_seq: topic.last_seq,
  };
}
