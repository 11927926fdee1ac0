/**
 * `agent-bus search QUERY`: the `messages_search` engine from the command
 * line (same modes, filters and fallbacks).
 *
 * @module
 */

import { findTopic } from "../../bus/admin.ts";
import {
  choiceOption,
  type Command,
  defineCommand,
  intOption,
  openCliRuntime,
  UsageError,
} from "../command.ts";
import { localTime } from "../format.ts";

const USAGE = `Usage: agent-bus search QUERY [options]

  --mode MODE     hybrid (default), fts or semantic
  --topic TOPIC   Only this topic (id or name)
  --limit N       Most results (default 20, at most 100)
  --sender NAME   Only messages from this sender
  --json          The full result, as the tool returns it`;

/** The `search` command. */
export const searchCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    mode: { type: "string" },
    topic: { type: "string" },
    limit: { type: "string" },
    sender: { type: "string" },
    json: { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length === 0) throw new UsageError("search needs a QUERY");
    await using runtime = openCliRuntime(ctx);
    const { bus, search } = runtime;
    const style = ctx.print.style();
    const result = await search.search({
      query: positionals.join(" "),
      mode: choiceOption(values.mode, "mode", ["hybrid", "fts", "semantic"] as const, "hybrid"),
      limit: intOption(values.limit, "limit", 20, 1),
      topicId: values.topic ? findTopic(bus, values.topic).topic_id : undefined,
      sender: values.sender,
      includeContent: false,
    }, { highlight: style.enabled ? ["\x1b[1;33m", "\x1b[0m"] : ["«", "»"] });
    if (values.json) {
      ctx.print.json(result);
      return 0;
    }
    for (const warning of result.warnings) {
      ctx.print.err(style.yellow(`note: ${warning.message ?? warning.code}`));
    }
    if (result.results.length === 0) {
      ctx.print.out("No matches.");
      return 0;
    }
    for (const hit of result.results) {
      const score = hit.score !== undefined
        ? `score ${hit.score.toFixed(3)}`
        : hit.semantic_score != null
        ? `similarity ${hit.semantic_score.toFixed(3)}`
        : `rank ${(hit.rank ?? hit.fts_rank)?.toFixed(2) ?? "-"}`;
      ctx.print.out(
        `${style.bold(hit.topic_name ?? hit.topic_id)} #${hit.seq} ${style.byName(hit.sender)} ` +
          style.dim(`${localTime(hit.created_at)} · ${score} · ${hit.message_id}`),
      );
      ctx.print.out(`    ${hit.snippet.replace(/\s+/g, " ").trim()}`);
    }
    return 0;
  },
});
