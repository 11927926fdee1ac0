/**
 * `GET /events`: the bus's live events in AgentChatBus's shape, for its VS
 * Code extension and web clients. Each event is one `data:` frame holding
 * `{type, payload}`, starting with `{type: "connected"}`; the changes come
 * from the same {@linkcode EventHub} as the console's `/api/events`:
 * `msg.new` (the message, with its `thread_id`), `msg.reply` (when it
 * answers another), `msg.handoff` and `msg.stop`, `thread.updated` or `thread.deleted` (a topic changed or
 * went), and `agent.updated` (who is present in a thread changed). A
 * message's frames carry its position as their `id`; there is no replay
 * (AgentChatBus's clients re-fetch after a reconnect). An idle stream gets a
 * keep-alive comment.
 *
 * @module
 */

import type { Message } from "../bus/messages.ts";
import { type EventHub, type HubEvent, sseResponse } from "./events.ts";

/** What {@linkcode chatbusEventStream} needs. */
export interface ChatbusEventsOptions {
  hub: EventHub;
  keepAliveMs: number;
  /** Ends the stream (server shutdown). */
  signal: AbortSignal;
}

/** Open the stream. */
export function chatbusEventStream(options: ChatbusEventsOptions): Response {
  return sseResponse(options.signal, (send) => {
    send(frame({ type: "connected", payload: {} }));
    const unsubscribe = options.hub.subscribe((change) => {
      // (A message's frames carry its position as their id, as AgentChatBus's Python server did.)
      const id = change.position === undefined ? "" : `id: ${change.position}\n`;
      for (const event of translate(change)) send(id + frame(event));
    });
    const keepAlive = setInterval(() => send(": keep-alive\n\n"), options.keepAliveMs);
    return () => {
      clearInterval(keepAlive);
      unsubscribe();
    };
  });
}

function frame(event: { type: string; payload: unknown }): string {
  return `data: ${JSON.stringify(event)}\n\n`;
}

/** A hub event as AgentChatBus names it (a reply is also a `msg.reply`). */
function translate(change: HubEvent): { type: string; payload: unknown }[] {
  const data = change.data as Record<string, unknown>;
  switch (change.event) {
    case "message": {
      const message = (data as { message: Message }).message;
      const events: { type: string; payload: unknown }[] = [
        { type: "msg.new", payload: chatMessage(message) },
      ];
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
    case "msg.handoff":
    case "msg.stop":
      return [{ type: change.event, payload: { ...data, thread_id: change.topicId } }];
    case "topic":
      return [
        data.deleted
          ? { type: "thread.deleted", payload: { thread_id: change.topicId } }
          : { type: "thread.updated", payload: { ...data, thread_id: change.topicId } },
      ];
    case "presence":
      return [{
        type: "agent.updated",
        payload: { thread_id: change.topicId, agents: data.agents },
      }];
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
