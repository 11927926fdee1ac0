/**
 * `messages_search`: search message bodies across topics, by words, by
 * meaning, or both. Read-only; needs no join.
 *
 * @module
 */

import { z } from "zod";
import { topicIdArg } from "../../bus/schemas.ts";
import { invalidArgument } from "../../errors.ts";
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT } from "../../search/mod.ts";
import { defineTool } from "../define_tool.ts";
import { oneLine, quote } from "../text.ts";

/** Results shown in the text (all are in structuredContent). */
const TEXT_ROWS = 20;

const timeArg = z.union([z.number(), z.string().max(64, "exceeds max length (64)")]);

/** Unix seconds from a number of seconds or an ISO 8601 date. */
function toSeconds(value: number | string | null | undefined, field: string): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "number") return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidArgument(`${field} must be unix seconds or an ISO 8601 date`);
  return ms / 1000;
}

/** The `messages_search` tool. */
export const messagesSearchTool = defineTool({
  name: "messages_search",
  title: "Search messages",
  description:
    "Search messages across all topics, or within topic_id. mode='hybrid' (default) combines " +
    "word matching with meaning (when a local embedding endpoint is configured); 'fts' matches " +
    "words only (all of them first, then any; code identifiers match by their parts, so " +
    "'user name' finds getUserName); 'semantic' matches meaning only. Filter by sender, " +
    "message_type, since/until (unix seconds or ISO dates). Snippets mark matches with «». " +
    "No topic_join needed. Set include_content=true for full bodies.",
  input: z.strictObject({
    query: z.string().max(MAX_QUERY_CHARS, `exceeds max length (${MAX_QUERY_CHARS})`),
    topic_id: topicIdArg.nullish().describe("Search only this topic"),
    mode: z.enum(["hybrid", "fts", "semantic"]).default("hybrid"),
    limit: z.int().min(1, "must be an int > 0").max(
      MAX_SEARCH_LIMIT,
      `must be <= ${MAX_SEARCH_LIMIT}`,
    ).default(20),
    model: z.string().max(200, "exceeds max length (200)").nullish().describe(
      "Embedding model for semantic/hybrid modes (default: the configured one)",
    ),
    include_content: z.boolean().default(false).describe("Include content_markdown in results"),
    sender: z.string().max(64, "exceeds max length (64)").nullish().describe(
      "Only messages from this agent",
    ),
    message_type: z.string().max(32, "exceeds max length (32)").nullish().describe(
      'Only messages of this type, e.g. "question"',
    ),
    since: timeArg.nullish().describe("Only messages created at or after this time"),
    until: timeArg.nullish().describe("Only messages created at or before this time"),
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
      score: z.number().optional(),
      content_markdown: z.string().optional(),
    })),
    count: z.int(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  async run(args, { search }) {
    const { warnings, ...result } = await search.search({
      query: args.query,
      topicId: args.topic_id ?? undefined,
      mode: args.mode,
      limit: args.limit,
      model: args.model ?? undefined,
      includeContent: args.include_content,
      sender: args.sender ?? undefined,
      messageType: args.message_type ?? undefined,
      since: toSeconds(args.since, "since"),
      until: toSeconds(args.until, "until"),
    });
    // With include_content the engine already kept the bodies within the result budget.
    const shown = args.include_content ? result.results : result.results.slice(0, TEXT_ROWS);
    const lines = shown.map((hit) => {
      const head = `- [${hit.topic_name} #${hit.seq}] ${hit.sender} (${hit.message_type}) ` +
        `id=${hit.message_id} topic_id=${hit.topic_id}`;
      return args.include_content && hit.content_markdown !== undefined
        ? `${head}\n${hit.content_markdown}`
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
