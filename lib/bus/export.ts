/**
 * A topic written out whole: Markdown for people, JSON for programs. The
 * formats follow the original program's export so existing scripts keep
 * working. Shared by `agent-bus export` and the web console.
 *
 * @module
 */

import { messagesFrom } from "./admin.ts";
import type { Message } from "./messages.ts";
import type { Bus } from "./mod.ts";
import type { Topic } from "./topics.ts";

const BATCH = 1000;
/** The most messages one export holds. */
export const MAX_EXPORT_MESSAGES = 1_000_000;

/**
 * A topic's messages after `afterSeq`, oldest first, read in batches
 * (`onBatch` gets the running count), at most {@linkcode MAX_EXPORT_MESSAGES}.
 */
export function exportMessages(
  bus: Bus,
  topicId: string,
  options: { afterSeq?: number; onBatch?: (count: number) => void } = {},
): Message[] {
  const messages: Message[] = [];
  let after = options.afterSeq ?? 0;
  for (;;) {
    const batch = messagesFrom(bus, topicId, after, BATCH);
    messages.push(...batch);
    options.onBatch?.(messages.length);
    if (batch.length < BATCH || messages.length >= MAX_EXPORT_MESSAGES) return messages;
    after = batch.at(-1)!.seq;
  }
}

/** `{topic_id, topic_name, message_count, messages: [...]}` */
export function exportJson(topic: Topic, messages: Message[]): string {
  return JSON.stringify(
    {
      topic_id: topic.topic_id,
      topic_name: topic.name,
      message_count: messages.length,
      messages: messages.map((m) => ({
        message_id: m.message_id,
        seq: m.seq,
        sender: m.sender,
        message_type: m.message_type,
        reply_to: m.reply_to,
        content_markdown: m.content_markdown,
        metadata: m.metadata,
        created_at: m.created_at,
      })),
    },
    null,
    2,
  );
}

/** A `# name` heading, the topic id and count, then one `### [seq] sender` section per message. */
export function exportMarkdown(topic: Topic, messages: Message[]): string {
  const seqOf = new Map(messages.map((m) => [m.message_id, m]));
  const parts = [
    `# ${topic.name}`,
    "",
    `**Topic ID:** ${topic.topic_id}  `,
    `**Messages:** ${messages.length}`,
  ];
  for (const m of messages) {
    parts.push("", `### [${m.seq}] ${m.sender}`, "");
    const when = new Date(m.created_at * 1000).toISOString().replace(/\.\d+Z$/, "Z");
    parts.push(`*${m.message_type} · ${when}*`, "");
    if (m.reply_to) {
      const target = seqOf.get(m.reply_to);
      parts.push(
        target ? `↩︎ reply to ${target.sender} (#${target.seq})` : `↩︎ reply to ${m.reply_to}`,
        "",
      );
    }
    parts.push(m.content_markdown);
  }
  return parts.join("\n");
}
