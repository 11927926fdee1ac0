/**
 * `messages_search`: find messages across topics (seed section 4.7).
 *
 * Full-text search runs on our `bus_fts` index: every word must match, and
 * when that finds nothing, any word may (ranked by bm25, so messages with
 * more of the words come first). Semantic search is not built yet: the
 * `hybrid` and `semantic` modes return the full-text results with a
 * `semantic_unavailable` warning, so callers written for them keep working.
 *
 * @module
 */

import { invalidArgument, type Warning } from "../errors.ts";
import type { Store } from "../store/mod.ts";
import { type FtsHit, ftsSearch } from "../store/search.ts";
import { toFtsExpressions } from "./fts_query.ts";

/** Search modes of the seed. */
export type SearchMode = "hybrid" | "fts" | "semantic";

/** Most results one search returns. */
export const MAX_SEARCH_LIMIT = 100;
/** Longest query accepted. */
export const MAX_QUERY_CHARS = 16384;

/** Arguments of {@linkcode searchMessages}. */
export interface SearchArgs {
  query: string;
  topicId?: string | undefined;
  mode: SearchMode;
  limit: number;
  model?: string | undefined;
  includeContent: boolean;
}

/** One result: a full-text hit's fields; which score fields are set depends on the mode. */
export interface SearchHit extends Omit<FtsHit, "rank" | "content_markdown"> {
  rank?: number;
  fts_rank?: number | null;
  semantic_score?: number | null;
  content_markdown?: string;
}

/** `messages_search`'s structured output. */
export interface SearchResult {
  query: string;
  mode: SearchMode;
  topic_id: string | null;
  include_content: boolean;
  results: SearchHit[];
  count: number;
  warnings: Warning[];
}

/** Options of {@linkcode searchMessages}. */
export interface SearchOptions {
  /**
   * Markers around matched words in snippets. The default, « and », reads
   * well for models and people and, unlike Markdown bold, does not collide
   * with the Markdown that message bodies are written in.
   */
  highlight?: readonly [string, string];
}

/**
 * Search message bodies.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a blank query or a bad limit
 */
export function searchMessages(
  store: Store,
  args: SearchArgs,
  options: SearchOptions = {},
): SearchResult {
  const query = args.query.trim();
  if (!query) throw invalidArgument("query must be a non-empty string");
  if (args.query.length > MAX_QUERY_CHARS) {
    throw invalidArgument(`query exceeds max length (${MAX_QUERY_CHARS})`);
  }
  if (args.limit < 1 || args.limit > MAX_SEARCH_LIMIT) {
    throw invalidArgument(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
  }
  const warnings: Warning[] = [];
  if (args.mode !== "fts") {
    warnings.push({
      code: "semantic_unavailable",
      message: `Semantic search is not available in this build; mode "${args.mode}" ` +
        `returned full-text results`,
    });
  }
  const hits = ftsHits(store, query, args, options.highlight ?? ["«", "»"]);
  const results = hits.map((hit) => toResult(hit, args));
  return {
    query: args.query,
    mode: args.mode,
    topic_id: args.topicId ?? null,
    include_content: args.includeContent,
    results,
    count: results.length,
    warnings,
  };
}

function ftsHits(
  store: Store,
  query: string,
  args: SearchArgs,
  highlight: readonly [string, string],
): FtsHit[] {
  const expressions = toFtsExpressions(query);
  if (!expressions) return [];
  const run = (match: string): FtsHit[] =>
    ftsSearch(store, {
      match,
      topicId: args.topicId ?? null,
      limit: args.limit,
      highlight,
      snippetTokens: 12,
    });
  return store.read(() => {
    const every = run(expressions.all);
    if (every.length > 0 || expressions.terms.length === 1) return every;
    return run(expressions.any);
  });
}

function toResult(hit: FtsHit, args: SearchArgs): SearchHit {
  const result: SearchHit = {
    topic_id: hit.topic_id,
    topic_name: hit.topic_name,
    message_id: hit.message_id,
    seq: hit.seq,
    sender: hit.sender,
    message_type: hit.message_type,
    created_at: hit.created_at,
    snippet: hit.snippet,
  };
  if (args.mode === "fts") {
    result.rank = hit.rank;
  } else {
    result.fts_rank = hit.rank;
    result.semantic_score = null;
  }
  if (args.includeContent) result.content_markdown = hit.content_markdown;
  return result;
}
