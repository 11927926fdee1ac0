/**
 * `agent-bus export TOPIC`: a topic's messages as Markdown or JSON, to
 * stdout or a file, read in batches with a progress bar on a terminal.
 * Formats follow the original program's (see the README) so existing
 * scripts keep working; a file is written whole or not at all.
 *
 * @module
 */

import { findTopic, topicSummary } from "../../bus/admin.ts";
import { exportJson, exportMarkdown, exportMessages } from "../../bus/export.ts";
import {
  choiceOption,
  type Command,
  defineCommand,
  intOption,
  openCliRuntime,
  UsageError,
  userPath,
} from "../command.ts";
import { startProgress } from "../progress.ts";
import { counted } from "../../strings.ts";

const USAGE = `Usage: agent-bus export TOPIC [--format markdown|json] [-o FILE] [--after-seq N]

Write a topic's messages, oldest first.

  --format      markdown (default) or json
  -o, --output  Write to FILE instead of stdout
  --after-seq   Only messages after this seq (a delta export)`;

/** The `export` command. */
export const exportCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    format: { type: "string", short: "f" },
    output: { type: "string", short: "o" },
    "after-seq": { type: "string" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length !== 1) throw new UsageError("export needs one TOPIC");
    const format = choiceOption(values.format, "format", ["markdown", "json"] as const, "markdown");
    const afterSeq = intOption(values["after-seq"], "after-seq", 0);
    await using runtime = openCliRuntime(ctx);
    const { bus } = runtime;
    const topic = findTopic(bus, positionals[0]!);
    const total = Math.max(0, topicSummary(bus, topic.topic_id).last_seq - afterSeq);
    const progress = startProgress(ctx.io.stderr, `Exporting "${topic.name}"`, total);
    const messages = exportMessages(bus, topic.topic_id, {
      afterSeq,
      onBatch: (count) => progress.update(count),
    });
    progress.finish();
    if (messages.length === 0) {
      ctx.print.err("No messages to export.");
      return 0;
    }
    const text = format === "json" ? exportJson(topic, messages) : exportMarkdown(topic, messages);
    if (values.output) {
      const file = userPath(ctx, values.output);
      const temp = `${file}.tmp-${Deno.pid}`;
      await Deno.writeTextFile(temp, text.endsWith("\n") ? text : `${text}\n`);
      await Deno.rename(temp, file);
      ctx.print.err(`Exported ${counted(messages.length, "message")} to ${values.output}`);
    } else {
      ctx.print.out(text);
    }
    return 0;
  },
});
