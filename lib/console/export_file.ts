/**
 * A topic (or thread) as a downloaded file: Markdown or JSON, named after
 * it, for `GET /api/topics/{id}/export` and AgentChatBus's
 * `GET /api/threads/{id}/export`.
 *
 * @module
 */

import { topicSummary } from "../bus/admin.ts";
import { exportJson, exportMarkdown, exportMessages } from "../bus/export.ts";
import type { Bus } from "../bus/mod.ts";

/** The whole topic as an attachment in `format`. */
export function exportFile(bus: Bus, topicId: string, format: "markdown" | "json"): Response {
  const topic = topicSummary(bus, topicId);
  const messages = exportMessages(bus, topicId);
  const file = `${topic.name.replace(/[^\w.-]+/g, "_").slice(0, 100) || topic.topic_id}`;
  const [body, type, ext] = format === "json"
    ? [exportJson(topic, messages), "application/json", "json"]
    : [exportMarkdown(topic, messages), "text/markdown", "md"];
  return new Response(`${body}\n`, {
    headers: {
      "content-type": `${type}; charset=utf-8`,
      "content-disposition": `attachment; filename="${file}.${ext}"`,
      "cache-control": "no-store",
    },
  });
}
