/**
 * `GET /events`: the bus's live events in AgentChatBus's shape, for its VS
 * Code extension and web clients. Each event is one `data:` frame holding
 * `{type, payload}`, starting with `{type: "connected"}`; the changes come
 * from the same {@linkcode EventHub} as the console's `/api/events`, named
 * as AgentChatBus's TS server names them:
 *
 * - `msg.new` (the message, with its `thread_id`), `msg.reply` (when it
 *   answers another), `msg.handoff` and `msg.stop`;
 * - `msg.edit`, `msg.react`, `msg.unreact` (the message as it is now);
 * - `thread.created`, `thread.state` (its state changed, or it reopened),
 *   `thread.closed` ({thread_id, summary}), `thread.updated` (renamed or its
 *   metadata changed), `thread.deleted` ({thread_id}); a new message alone
 *   changes no thread event (`msg.new` says it);
 * - `agent.online` (registered), `agent.updated` (the agent; `{id,
 *   is_online: false}` when it left; and `{thread_id, agents}` when who is
 *   present in a thread changed), `agent.typing` ({agent_id, thread_id,
 *   is_typing}, the agent named as AgentChatBus names it).
 *
 * A message's frames carry its position as their `id`; there is no replay
 * (AgentChatBus's clients re-fetch after a reconnect). An idle stream gets a
 * keep-alive comment; a client that stops reading is sent `reconnect` and
 * the stream ends once it is a few MB behind.
 *
 * @module
 */

import type { PresentAgent, TopicSummary } from "../../bus/admin.ts";
import { findAgent } from "../../bus/chat/agents.ts";
import type { ChatEventRow } from "../../bus/chat/journal.ts";
import { getMessage } from "../../bus/chat/read.ts";
import type { Message } from "../../bus/messages.ts";
import type { Bus } from "../../bus/mod.ts";
import { restAgent, restMessage, threadOfSummary } from "./shapes.ts";
import { type EventHub, type HubEvent, sseResponse } from "../events.ts";

/** What {@linkcode chatbusEventStream} needs. */
export interface ChatbusEventsOptions {
  bus: Bus;
  hub: EventHub;
  keepAliveMs: number;
  /** Ends the stream (server shutdown). */
  signal: AbortSignal;
}

/** One frame's event. */
interface ChatbusEvent {
  type: string;
  payload: unknown;
}

/** Open the stream. */
export function chatbusEventStream(options: ChatbusEventsOptions): Response {
  return sseResponse(options.signal, (send) => {
    send(frame({ type: "connected", payload: {} }));
    const unsubscribe = options.hub.subscribe((change) => {
      // (A message's frames carry its position as their id, as AgentChatBus's Python server did.)
      const id = change.position === undefined ? "" : `id: ${change.position}\n`;
      for (const event of translate(options.bus, change)) send(id + frame(event));
    });
    const keepAlive = setInterval(() => send(": keep-alive\n\n"), options.keepAliveMs);
    return () => {
      clearInterval(keepAlive);
      unsubscribe();
    };
  }, FELL_BEHIND);
}

/** The last frame to a client that fell behind: it reconnects, and re-fetches as after any reconnect. */
const FELL_BEHIND = frame({
  type: "reconnect",
  payload: { reason: "the client fell behind; reconnect and re-fetch" },
});

function frame(event: ChatbusEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

/** A hub event as AgentChatBus names it (none, one or several events). */
function translate(bus: Bus, change: HubEvent): ChatbusEvent[] {
  const data = change.data as Record<string, unknown>;
  switch (change.event) {
    case "message":
      return messageEvents((data as { message: Message }).message);
    case "msg.handoff":
    case "msg.stop":
      return [{ type: change.event, payload: { ...data, thread_id: change.topicId } }];
    case "topic":
      return data.deleted
        ? [{ type: "thread.deleted", payload: { thread_id: change.topicId } }]
        : threadEvents(
          data as unknown as TopicSummary,
          change.previous as TopicSummary | undefined,
        );
    case "presence":
      return presenceEvents(
        change.topicId,
        (data as { agents: PresentAgentView[] }).agents,
        (change.previous ?? []) as PresentAgentView[],
      );
    case "chat":
      return journalEvents(bus, data as unknown as ChatEventRow);
  }
}

/** `msg.new`, and `msg.reply` for a reply. */
function messageEvents(message: Message): ChatbusEvent[] {
  const events: ChatbusEvent[] = [{ type: "msg.new", payload: chatMessage(message) }];
  if (message.reply_to !== null) {
    events.push({
      type: "msg.reply",
      payload: {
        msg_id: message.message_id,
        thread_id: message.topic_id,
        reply_to_msg_id: message.reply_to,
        author: message.sender,
        seq: message.seq,
      },
    });
  }
  return events;
}

/** What a topic's new summary means for its thread, against the summary before it. */
function threadEvents(topic: TopicSummary, previous: TopicSummary | undefined): ChatbusEvent[] {
  const thread = threadOfSummary(topic);
  if (previous === undefined) return [{ type: "thread.created", payload: thread }];
  if (topic.status === "closed" && previous.status !== "closed") {
    return [{
      type: "thread.closed",
      payload: { thread_id: topic.topic_id, summary: topic.close_reason },
    }];
  }
  if (topic.status !== previous.status || topic.thread_state !== previous.thread_state) {
    return [{ type: "thread.state", payload: thread }];
  }
  const renamed = topic.name !== previous.name ||
    JSON.stringify(topic.metadata) !== JSON.stringify(previous.metadata);
  return renamed ? [{ type: "thread.updated", payload: thread }] : [];
}

type PresentAgentView = Omit<PresentAgent, "age_seconds">;

/** Who is present in a thread, and `agent.typing` for each agent that began or stopped typing. */
function presenceEvents(
  threadId: string,
  agents: PresentAgentView[],
  previous: PresentAgentView[],
): ChatbusEvent[] {
  const events: ChatbusEvent[] = [{
    type: "agent.updated",
    payload: { thread_id: threadId, agents },
  }];
  const typingBefore = new Set(previous.filter((a) => a.typing).map((a) => a.agent_name));
  const typingNow = new Set(agents.filter((a) => a.typing).map((a) => a.agent_name));
  for (const name of new Set([...typingBefore, ...typingNow])) {
    if (typingBefore.has(name) === typingNow.has(name)) continue;
    events.push({
      type: "agent.typing",
      payload: { agent_id: name, thread_id: threadId, is_typing: typingNow.has(name) },
    });
  }
  return events;
}

/** An edit, a reaction or an agent's change, with the message or agent as it is now. */
function journalEvents(bus: Bus, row: ChatEventRow): ChatbusEvent[] {
  switch (row.kind) {
    case "msg.edit":
    case "msg.react":
    case "msg.unreact": {
      const found = getMessage(bus, row.ref);
      return found.found ? [{ type: row.kind, payload: restMessage(found.message) }] : [];
    }
    case "agent.online":
    case "agent.updated":
    case "agent.offline": {
      const agent = row.kind === "agent.offline" ? undefined : findAgent(bus, row.ref);
      if (agent === undefined) {
        return [{
          type: "agent.updated",
          payload: { id: row.ref, agent_id: row.ref, is_online: false },
        }];
      }
      return [{ type: row.kind, payload: restAgent(agent) }];
    }
    default:
      return []; // (a kind a newer agent-bus writes)
  }
}

/** A message in the fields AgentChatBus's clients read. */
function chatMessage(message: Message) {
  return {
    id: message.message_id,
    msg_id: message.message_id,
    thread_id: message.topic_id,
    seq: message.seq,
    author: message.sender,
    author_id: message.chat?.author_id ?? null,
    role: message.chat?.role ?? "user",
    priority: message.chat?.priority ?? "normal",
    content: message.content_markdown,
    metadata: message.metadata,
    reply_to_msg_id: message.reply_to,
    created_at: new Date(message.created_at * 1000).toISOString(),
  };
}
