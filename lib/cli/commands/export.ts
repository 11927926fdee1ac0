/**
 * `agent-bus export TOPIC`: a topic's messages as Markdown or JSON, to
 * stdout or a file, read in batches with a progress bar on a terminal.
 * Formats follow the original program's (see the README) so existing
 * scripts keep working; a file is written whole or not at all.
 *
 * @module
 */

import { findTopic, messagesFrom, topicSummary } from "../../bus/admin.ts";
import type { Message } from "../../bus/messages.ts";
import type { Topic } from "../../bus/topics.ts";
import {
  choiceOption,
  type Command,
  intOption,
  openCliBus,
  parseCommand,
  UsageError,
  userPath,
} from "../command.ts";
import { err, out } from "../format.ts";
import { startProgress } from "../progress.ts";

const USAGE = `Usage: agent-bus export TOPIC [--format markdown|json] [-o FILE] [--after-seq N]

Write a topic's messages, oldest first.

  --format      markdown (default) or json
  -o, --output  Write to FILE instead of stdout
  --after-seq   Only messages after this seq (a delta export)`;

const BATCH = 1000;
/** The most messages one export holds. */
export const MAX_EXPORT_MESSAGES = 1_000_000;

/** The `export` command. */
export const exportCommand: Command = {
  summary: "Export a topic as Markdown or JSON",
  usage: USAGE,
  async run(args, ctx) {
    const { values, positionals } = parseCommand(args, {
      format: { type: "string", short: "f" },
      output: { type: "string", short: "o" },
      "after-seq": { type: "string" },
    });
    if (positionals.length !== 1) throw new UsageError("export needs one TOPIC");
    const format = choiceOption(values.format, "format", ["markdown", "json"] as const, "markdown");
    const afterSeq = intOption(values["after-seq"], "after-seq", 0);
    using bus = openCliBus(ctx);
    const topic = findTopic(bus, positionals[0]!);
    const total = Math.max(0, topicSummary(bus, topic.topic_id).last_seq - afterSeq);
    const progress = startProgress(`Exporting "${topic.name}"`, total);
    const messages: Message[] = [];
    let after = afterSeq;
    for (;;) {
      const batch = messagesFrom(bus, topic.topic_id, after, BATCH);
      messages.push(...batch);
      progress.update(messages.length);
      if (batch.length < BATCH || messages.length >= MAX_EXPORT_MESSAGES) break;
      after = batch.at(-1)!.seq;
    }
    progress.finish();
    if (messages.length === 0) {
      err("No messages to export.");
      return 0;
    }
    const text = format === "json" ? exportJson(topic, messages) : exportMarkdown(topic, messages);
    if (values.output) {
      const file = userPath(ctx, values.output);
      const temp = `${file}.tmp-${Deno.pid}`;
      await Deno.writeTextFile(temp, text.endsWith("\n") ? text : `${text}\n`);
      await Deno.rename(temp, file);
      err(`Exported ${messages.length} message(s) to ${values.output}`);
    } else {
      out(text);
    }
    return 0;
  },
};

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
