/**
 * A topic as a downloaded file, Markdown or JSON, named after it, for
 * `GET /api/topics/{id}/export`; and a thread as AgentChatBus's
 * `GET /api/threads/{id}/export` writes it.
 *
 * @module
 */

import { topicSummary } from "../bus/admin.ts";
import { listMessages } from "../bus/chat/read.ts";
import { threadGet } from "../bus/chat/threads.ts";
import type { ChatMessage } from "../bus/chat/wire.ts";
import { exportJson, exportMarkdown, exportMessages, MAX_EXPORT_MESSAGES } from "../bus/export.ts";
import type { Bus } from "../bus/mod.ts";

/** The whole topic as an attachment in `format`. */
export function exportFile(bus: Bus, topicId: string, format: "markdown" | "json"): Response {
  const topic = topicSummary(bus, topicId);
  const messages = exportMessages(bus, topicId);
  const file = `${topic.name.replace(/[^\w.-]+/g, "_").slice(0, 100) || topic.topic_id}`;
  const [body, type, ext] = format === "json"
    ? [exportJson(topic, messages), "application/json", "json"]
    : [exportMarkdown(topic, messages), "text/markdown", "md"];
  return attachment(`${body}\n`, `${type}; charset=utf-8`, `${file}.${ext}`);
}

/**
 * A thread as AgentChatBus exports it (`GET /api/threads/{id}/export`): a
 * Markdown file named after its topic's slug, with its status and dates in
 * a quote, then each message under `### author — date`, rules between.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export function chatbusExportFile(bus: Bus, threadId: string): Response {
  const thread = threadGet(bus, threadId);
  const messages = chatMessagesOf(bus, threadId);
  const lines = [
    `# ${thread.topic}`,
    "",
    `> **Status:** ${thread.status} | **Created:** ${minuteUtc(Date.parse(thread.created_at))}`,
    `> **Messages:** ${messages.length} | **Exported:** ${minuteUtc(Date.now())}`,
    "",
    "---",
    "",
  ];
  for (const message of messages) {
    lines.push(`### ${message.author_name} — ${minuteUtc(Date.parse(message.created_at))}`, "");
    lines.push(message.content, "", "---", "");
  }
  const slug = thread.topic.toLowerCase().replace(/[^\w-]+/g, "-").replace(/-{2,}/g, "-")
    .replace(/^-|-$/g, "").slice(0, 80) || "thread";
  return attachment(lines.join("\n"), "text/markdown; charset=utf-8", `${slug}.md`);
}

/** Every message of a thread (at most {@linkcode MAX_EXPORT_MESSAGES}), with its author's name. */
function chatMessagesOf(bus: Bus, threadId: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (let after = 0; messages.length < MAX_EXPORT_MESSAGES;) {
    const page = listMessages(bus, {
      thread_id: threadId,
      after_seq: after,
      limit: MAX_EXPORT_MESSAGES,
      include_system_prompt: false,
      include_attachments: false,
    });
    messages.push(...page.messages.map((listed) => listed.message));
    if (!page.has_more || page.messages.length === 0) break;
    after = messages.at(-1)!.seq;
  }
  return messages;
}

/** "2026-03-19 14:05 UTC", as AgentChatBus writes dates in exports. */
function minuteUtc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function attachment(body: string, type: string, file: string): Response {
  return new Response(body, {
    headers: {
      "content-type": type,
      "content-disposition": `attachment; filename="${file}"`,
      "cache-control": "no-store",
    },
  });
}
