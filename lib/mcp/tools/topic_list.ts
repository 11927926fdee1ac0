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
  description: "List topics, newest first. status: open (default), closed or all. A list cut " +
    "short by limit or by the result size says has_more and gives next_cursor: pass it as " +
    "cursor to get the rest.",
  input: topicListInput,
  output: z.object({
    topics: z.array(topicSchema),
    count: z.int(),
    has_more: z.boolean().describe(
      "More topics exist than limit or the result size allowed: call again with cursor",
    ),
    next_cursor: z.string().nullable().describe("Pass as cursor for the topics after these"),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  run(args, { bus }) {
    const { topics, hasMore, nextCursor, cutByBudget } = listTopics(bus, {
      status: args.status,
      limit: args.limit,
      cursor: args.cursor,
    });
    const lines = topics.slice(0, TEXT_ROWS).map((topic) =>
      `- ${quote(topic.name)} topic_id=${topic.topic_id} status=${topic.status}`
    );
    if (topics.length > TEXT_ROWS) lines.push(`… and ${topics.length - TEXT_ROWS} more`);
    const warnings = hasMore
      ? [{
        code: "TOPICS_TRUNCATED",
        message: `${topics.length} topics are listed here ` +
          (cutByBudget
            ? "(as many as fit one result, AGENT_BUS_TOOL_RESULT_MAX_BYTES)"
            : `(the limit; at most ${MAX_TOPIC_LIST})`) +
          `; more exist: call topic_list again with cursor="${nextCursor}" for the next ones`,
        context: { limit: args.limit, returned: topics.length, next_cursor: nextCursor },
      }]
      : [];
    return {
      structured: { topics, count: topics.length, has_more: hasMore, next_cursor: nextCursor },
      text: `${topics.length} ${args.status === "all" ? "" : `${args.status} `}topic(s)` +
        (lines.length ? `:\n${lines.join("\n")}` : ""),
      warnings,
    };
  },
});
