/**
 * What the hooks say to the model: the reason a stop is blocked (who wrote,
 * where, the first lines, and the exact tool call to read and answer), and
 * the one line of context added when a prompt is submitted or a session
 * starts.
 *
 * @module
 */

import type { Excerpt, UnreadItem } from "../../bus/unread.ts";
import { MAX_COUNTED } from "../../bus/unread.ts";

const plural = (n: number, one: string, many = `${one}s`) =>
  `${n >= MAX_COUNTED ? `${MAX_COUNTED}+` : n} ${n === 1 ? one : many}`;

const quote = (e: Excerpt) => `    ${e.from}: ${e.text}`;

/** Senders of the quoted messages, without repeats. */
const senders = (first: Excerpt[]) => [...new Set(first.map((e) => e.from))].join(", ");

function describe(item: UnreadItem): string[] {
  switch (item.kind) {
    case "topic":
      return [
        `- Topic "${item.topicName}" (topic_id ${item.topicId}), where you are "${item.agentName}": ` +
        `${plural(item.count, "new message")}.`,
        ...item.first.map(quote),
        `  Read: sync(topic_id="${item.topicId}"). Answer: sync(topic_id="${item.topicId}", ` +
        `outbox=[{content_markdown: "..."}]).`,
      ];
    case "mail":
      return [
        `- Mail for "${item.agent}": ${plural(item.count, "unread message")}.`,
        ...item.first.map(quote),
        `  Read: bus.drain(). Answer: bus.send(to="<sender>", body=...).`,
      ];
    case "answer":
      return [
        `- Your question ${item.questionId} on topic ${item.topicId} was ` +
        (item.status === "answered" ? `answered${item.by ? ` by ${item.by}` : ""}` : item.status) +
        `. Read: ask_poll(topic_id="${item.topicId}", question_id="${item.questionId}").`,
      ];
    case "queue": {
      const topic = item.first[0]!.topicId;
      return [
        `- ${plural(item.count, "question")} wait for a teacher.`,
        ...item.first.map((q) => `    ${q.from} on topic ${q.topicId}: ${q.text}`),
        `  Take them: teacher_drain(topic_id="${topic}"); answer: teacher_publish(topic_id="${topic}", ` +
        `responses=[...]).`,
      ];
    }
  }
}

/** The first line of every {@linkcode stopReason}. */
export const STOP_REASON_HEADER =
  "agent-bus: messages are waiting for you. Read them and answer where needed before you stop.";

/** The reason a stop is blocked. */
export function stopReason(items: UnreadItem[]): string {
  return [STOP_REASON_HEADER, ...items.flatMap(describe)].join("\n");
}

function summary(item: UnreadItem): string {
  switch (item.kind) {
    case "topic":
      return `${plural(item.count, "unread", "unread")} on ${item.topicName} from ${
        senders(item.first)
      }; ` +
        `you are '${item.agentName}' there`;
    case "mail":
      return `${plural(item.count, "unread mail", "unread mail")} for '${item.agent}' from ${
        senders(item.first)
      }`;
    case "answer":
      return `your question ${item.questionId} was ${item.status}`;
    case "queue":
      return `${plural(item.count, "question")} waiting for a teacher`;
  }
}

/** One line of context ("agent-bus: 2 unread on release-1.4 from codex; you are 'claude' there"). */
export function contextLine(items: UnreadItem[]): string {
  return `agent-bus: ${items.map(summary).join("; ")}.`;
}
