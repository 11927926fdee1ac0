/**
 * `messages_search`: search message bodies across topics, by words, by
 * meaning, or both. Read-only; needs no join.
 *
 * @module
 */

import { searchArgsOf, searchInput, searchResultSchema } from "../../search/schema.ts";
import { defineTool } from "../define_tool.ts";
import { oneLine, quote } from "../text.ts";

/** Results shown in the text (all are in structuredContent). */
const TEXT_ROWS = 20;

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
  input: searchInput,
  output: searchResultSchema,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  async run(args, { search }) {
    const { warnings, ...result } = await search.search(searchArgsOf(args));
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
