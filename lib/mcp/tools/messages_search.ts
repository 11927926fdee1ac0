/**
 * `messages_search`: search message bodies across topics. Read-only; needs
 * no join.
 *
 * @module
 */

import { z } from "zod";
import { topicIdArg } from "../../bus/schemas.ts";
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, searchMessages } from "../../search/mod.ts";
import { defineTool } from "../define_tool.ts";
import { oneLine, quote, truncate } from "../text.ts";

/** Results shown in the text (all are in structuredContent). */
const TEXT_ROWS = 20;

/** The `messages_search` tool. */
export const messagesSearchTool = defineTool({
  name: "messages_search",
  title: "Search messages",
  description:
    "Search messages across all topics, or within topic_id. Plain words are matched (all of " +
    "them first, then any); punctuation and search operators are treated as text. Snippets " +
    "mark matches with «». No topic_join needed. Set include_content=true for full bodies.",
  input: z.strictObject({
    query: z.string().max(MAX_QUERY_CHARS, `exceeds max length (${MAX_QUERY_CHARS})`),
    topic_id: topicIdArg.nullish().describe("Search only this topic"),
    mode: z.enum(["hybrid", "fts", "semantic"]).default("hybrid"),
    limit: z.int().min(1, "must be an int > 0").max(
      MAX_SEARCH_LIMIT,
      `must be <= ${MAX_SEARCH_LIMIT}`,
    ).default(20),
    model: z.string().max(200, "exceeds max length (200)").nullish().describe(
      "Embedding model for semantic/hybrid modes",
    ),
    include_content: z.boolean().default(false).describe("Include content_markdown in results"),
  }),
  output: z.object({
    query: z.string(),
    mode: z.enum(["hybrid", "fts", "semantic"]),
    topic_id: z.string().nullable(),
    include_content: z.boolean(),
    results: z.array(z.object({
      topic_id: z.string(),
      topic_name: z.string(),
      message_id: z.string(),
      seq: z.int(),
      sender: z.string(),
      message_type: z.string(),
      created_at: z.number(),
      snippet: z.string(),
      rank: z.number().optional(),
      fts_rank: z.number().nullable().optional(),
      semantic_score: z.number().nullable().optional(),
      content_markdown: z.string().optional(),
    })),
    count: z.int(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  run(args, { bus }) {
    const { warnings, ...result } = searchMessages(bus.store, {
      query: args.query,
      topicId: args.topic_id ?? undefined,
      mode: args.mode,
      limit: args.limit,
      model: args.model ?? undefined,
      includeContent: args.include_content,
    });
    const shown = result.results.slice(0, TEXT_ROWS);
    const perHit = Math.max(200, Math.floor(bus.config.toolTextMaxChars / (shown.length || 1)));
    const lines = shown.map((hit) => {
      const head = `- [${hit.topic_name} #${hit.seq}] ${hit.sender} (${hit.message_type}) ` +
        `id=${hit.message_id} topic_id=${hit.topic_id}`;
      return args.include_content && hit.content_markdown !== undefined
        ? `${head}\n${truncate(hit.content_markdown, perHit)}`
        : `${head}: ${oneLine(hit.snippet, 300)}`;
    });
    return {
      structured: result,
      text:
        `${result.count} result(s) for ${quote(args.query.slice(0, 200))} (mode=${result.mode})` +
        (lines.length ? `:\n${lines.join("\n")}` : ""),
      warnings,
    };
  },
});
