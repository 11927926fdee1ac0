/**
 * SQL for full-text search over `bus_fts`.
 *
 * The FTS query runs first in a subquery (`ORDER BY rank LIMIT n` lets FTS5
 * stop early) and only its hits are joined to `messages` and `topics`, by
 * `message_id` rather than rowid so a `VACUUM` cannot mismatch them.
 *
 * @module
 */

import type { Store } from "./mod.ts";

/** One full-text hit. `rank` is bm25: lower (more negative) is better. */
export interface FtsHit {
  topic_id: string;
  topic_name: string;
  message_id: string;
  seq: number;
  sender: string;
  message_type: string;
  created_at: number;
  snippet: string;
  rank: number;
  content_markdown: string;
}

/** Query of {@linkcode ftsSearch}; `match` must already be a safe FTS5 expression. */
export interface FtsQuery {
  match: string;
  topicId: string | null;
  limit: number;
  /** Markers put around each hit in the snippet. */
  highlight: readonly [string, string];
  /** Tokens of context in a snippet. */
  snippetTokens: number;
}

/** The best hits for `match`, best first. */
export function ftsSearch(store: Store, query: FtsQuery): FtsHit[] {
  const [open, close] = query.highlight;
  const filter = query.topicId === null ? "" : "AND topic_id = ?";
  const params = query.topicId === null
    ? [open, close, query.snippetTokens, query.match, query.limit]
    : [open, close, query.snippetTokens, query.match, query.topicId, query.limit];
  return store.stmt(
    `SELECT m.topic_id, t.name AS topic_name, m.message_id, m.seq, m.sender, m.message_type,
            m.created_at, f.snippet, f.rank, m.content_markdown
     FROM (SELECT message_id, snippet(bus_fts, 0, ?, ?, '…', ?) AS snippet, rank
           FROM bus_fts WHERE bus_fts MATCH ? ${filter} ORDER BY rank LIMIT ?) AS f
     JOIN messages AS m ON m.message_id = f.message_id
     JOIN topics AS t ON t.topic_id = m.topic_id
     ORDER BY f.rank`,
  ).all(...params) as unknown as FtsHit[];
}
