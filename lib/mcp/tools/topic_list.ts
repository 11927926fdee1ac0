/**
 * `topic_list`: topics by status, newest first.
 *
 * @module
 */

import { z } from "zod";
import { topicListInput, topicSchema } from "../../bus/schemas.ts";
import { listTopics, MAX_TOPIC_LIST } from "../../bus/topics.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";

/** Topics shown in the text (all are in structuredContent). */
const TEXT_ROWS = 50;

/** The `topic_list` tool. */
export const topicListTool = defineTool({
  name: "topic_list",
  title: "List topics",
  description: "List topics, newest first. status: open (default), closed or all.",
  input: topicListInput,
  output: z.object({
    topics: z.array(topicSchema),
    count: z.int(),
    has_more: z.boolean().describe(
      "More topics exist than limit (or the result budget) allowed; raise limit",
    ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  run(args, { bus }) {
    const { topics, hasMore, cutByBudget } = listTopics(bus, {
      status: args.status,
      limit: args.limit,
    });
    const lines = topics.slice(0, TEXT_ROWS).map((topic) =>
      `- ${quote(topic.name)} topic_id=${topic.topic_id} status=${topic.status}`
    );
    if (topics.length > TEXT_ROWS) lines.push(`… and ${topics.length - TEXT_ROWS} more`);
    const warnings = cutByBudget
      ? [{
        code: "TOPICS_TRUNCATED",
        message: `Only the newest ${topics.length} topics fit this result ` +
          `(AGENT_BUS_TOOL_RESULT_MAX_BYTES: their names and metadata are large); use ` +
          `topic_resolve(name=...) for one topic`,
        context: { limit: args.limit, returned: topics.length },
      }]
      : hasMore
      ? [{
        code: "TOPICS_TRUNCATED",
        message: `Only the newest ${args.limit} topics are listed; more exist. Call again with a ` +
          `larger limit (at most ${MAX_TOPIC_LIST}) or use topic_resolve(name=...)`,
        context: { limit: args.limit },
      }]
      : [];
    return {
      structured: { topics, count: topics.length, has_more: hasMore },
      text: `${topics.length} ${args.status === "all" ? "" : `${args.status} `}topic(s)` +
        (lines.length ? `:\n${lines.join("\n")}` : ""),
      warnings,
    };
  },
});
