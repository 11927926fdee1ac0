/**
 * `agent-bus watch TOPIC`: a live tail of a topic. It wakes on commits the
 * way a waiting `sync` does (the change feed: file events plus SQLite's
 * data_version), so a message shows within milliseconds, and it writes
 * nothing. Ctrl-C or SIGTERM ends it cleanly; so does the topic closing or
 * being deleted.
 *
 * @module
 */

import { findTopic, latestMessages, topicSummary } from "../../bus/admin.ts";
import { followTopic } from "../../bus/follow.ts";
import type { Message } from "../../bus/messages.ts";
import { BusError } from "../../errors.ts";
import { type Command, defineCommand, intOption, openCliRuntime, UsageError } from "../command.ts";
import { renderMessageLines } from "../render.ts";
import { onShutdownSignal } from "../../signals.ts";

const USAGE = `Usage: agent-bus watch TOPIC [--from SEQ | --last N] [--full] [--json]

Print a topic's messages as they arrive, until Ctrl-C.

  --from SEQ   Start at this seq (default: the last 10 messages, then new ones)
  --last N     Start with the last N messages (0: only new ones)
  --full       Whole bodies instead of one-line previews
  --json       One JSON object per message per line`;

/** The `watch` command. */
export const watchCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    from: { type: "string" },
    last: { type: "string" },
    full: { type: "boolean" },
    json: { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length !== 1) throw new UsageError("watch needs one TOPIC");
    if (values.from !== undefined && values.last !== undefined) {
      throw new UsageError("give --from or --last, not both");
    }
    await using runtime = openCliRuntime(ctx);
    const { bus } = runtime;
    const topic = findTopic(bus, positionals[0]!);
    const style = ctx.print.style();
    const print = (message: Message) =>
      ctx.print.out(
        values.json
          ? JSON.stringify(message)
          : renderMessageLines(message, style, { full: values.full ?? false }),
      );

    let after: number;
    if (values.from !== undefined) {
      after = intOption(values.from, "from", 1, 1) - 1;
    } else {
      const backlog = latestMessages(bus, topic.topic_id, intOption(values.last, "last", 10));
      backlog.forEach(print);
      after = backlog.at(-1)?.seq ?? topicSummary(bus, topic.topic_id).last_seq;
    }
    // On stderr, so it also tells a --json reader that the watch now follows.
    const notice = ctx.print.style("stderr");
    ctx.print.err(notice.dim(`Watching "${topic.name}" (${topic.topic_id}); Ctrl-C to stop`));

    const stop = new AbortController();
    const onSignal = () => stop.abort();
    const stopListening = onShutdownSignal(onSignal);
    try {
      const end = await followTopic(bus, topic.topic_id, {
        afterSeq: after,
        signal: stop.signal,
        onMessage: print,
      });
      if (end === "closed") ctx.print.err(notice.dim("The topic is closed."));
      return 0;
    } catch (error) {
      if (error instanceof BusError && error.code === "TOPIC_NOT_FOUND") {
        ctx.print.err("The topic was deleted.");
        return 1;
      }
      throw error;
    } finally {
      stopListening();
    }
  },
});
