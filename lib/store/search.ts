/**
 * SQL for full-text search over `bus_fts`, and for the queue of index rows
 * that still need their code terms.
 *
 * FTS5 orders its matches by rank (bm25, body weighted over terms) and the
 * outer query joins each to its message only until `LIMIT` rows passed the
 * filters. Snippets are not FTS5's `snippet()`: it scores a window around
 * every hit in a row, so a body with twenty thousand hits of one word took
 * seconds; the search engine marks the returned bodies itself. Rows
 * are joined by `message_id` rather than rowid, so a `VACUUM` that renumbers
 * rowids cannot pair a hit with the wrong message.
 *
 * @module
 */

import type { Store } from "./mod.ts";
import { ftsToTsquery } from "./postgres/tsquery.ts";

/** One full-text hit. `rank` is bm25: lower (more negative) is better. */
export interface FtsHit {
  topic_id: string;
  topic_name: string;
  message_id: string;
  seq: number;
  sender: string;
  message_type: string;
  created_at: number;
  rank: number;
  content_markdown: string;
}

/** Restrictions every search mode applies. */
export interface SearchFilters {
  topicId?: string | undefined;
  sender?: string | undefined;
  messageType?: string | undefined;
  /** Unix seconds, inclusive. */
  since?: number | undefined;
  /** Unix seconds, inclusive. */
  until?: number | undefined;
}

/** Query of {@linkcode ftsSearch}; `match` must already be a safe FTS5 expression. */
export interface FtsQuery extends SearchFilters {
  match: string;
  limit: number;
  /**
   * Rank only this many of the most recent matches (for a query that
   * matches nearly every message: a ranking function scores every row it
   * orders, so "the" over 100,000 messages cost 160 ms, and its ranking
   * says little anyway). Undefined ranks every match.
   */
  newest?: number | undefined;
}

/**
 * The best hits for `match`, best first. On PostgreSQL the expression
 * becomes a `tsquery` over the generated `tsv` column (body weighted over
 * terms, as bm25's weights here), ranked by `ts_rank_cd`, negated so that
 * lower is better on both engines.
 */
export function ftsSearch(store: Store, query: FtsQuery): FtsHit[] {
  if (query.newest !== undefined) return newestHits(store, query, query.newest);
  if (store.engine === "postgres") {
    const { sql, params } = filterSql(query, "f.topic_id");
    return store.stmt(
      `SELECT m.topic_id, t.name AS topic_name, m.message_id, m.seq, m.sender, m.message_type,
              m.created_at, -ts_rank_cd('{0.1, 0.2, 0.5, 1.0}', f.tsv, q.q) AS rank,
              m.content_markdown
       FROM (SELECT to_tsquery('bus_english', ?) AS q) AS q
       JOIN bus_fts AS f ON f.tsv @@ q.q
       JOIN messages AS m ON m.message_id = f.message_id
       JOIN topics AS t ON t.topic_id = m.topic_id
       WHERE 1 = 1${sql}
       ORDER BY rank LIMIT ?`,
    ).all(ftsToTsquery(query.match), ...params, query.limit) as unknown as FtsHit[];
  }
  const { sql, params } = filterSql(query, "bus_fts.topic_id");
  return store.stmt(
    `SELECT m.topic_id, t.name AS topic_name, m.message_id, m.seq, m.sender, m.message_type,
            m.created_at, bus_fts.rank AS rank, m.content_markdown
     FROM bus_fts
     JOIN messages AS m ON m.message_id = bus_fts.message_id
     JOIN topics AS t ON t.topic_id = m.topic_id
     WHERE bus_fts MATCH ?${sql}
     ORDER BY bus_fts.rank LIMIT ?`,
  ).all(
    query.match,
    ...params,
    query.limit,
  ) as unknown as FtsHit[];
}

/**
 * The best hits among the `newest` most recent matches; the filters apply
 * after (so a restrictive filter may leave fewer than `limit` of them).
 */
function newestHits(store: Store, query: FtsQuery, newest: number): FtsHit[] {
  const postgres = store.engine === "postgres";
  const inTopic = query.topicId === undefined ? "" : ` AND ${postgres ? "f." : ""}topic_id = ?`;
  const matches = postgres
    ? `SELECT f.message_id, -ts_rank_cd('{0.1, 0.2, 0.5, 1.0}', f.tsv, q.q) AS rank
       FROM (SELECT to_tsquery('bus_english', ?) AS q) AS q
       JOIN bus_fts AS f ON f.tsv @@ q.q
       WHERE 1 = 1${inTopic} ORDER BY f.rowid DESC LIMIT ?`
    : `SELECT message_id, rank FROM bus_fts WHERE bus_fts MATCH ?${inTopic}
       ORDER BY rowid DESC LIMIT ?`;
  const { sql, params } = filterSql({ ...query, topicId: undefined }, "m.topic_id");
  return store.stmt(
    `SELECT m.topic_id, t.name AS topic_name, m.message_id, m.seq, m.sender, m.message_type,
            m.created_at, hit.rank AS rank, m.content_markdown
     FROM (${matches}) AS hit
     JOIN messages AS m ON m.message_id = hit.message_id
     JOIN topics AS t ON t.topic_id = m.topic_id
     WHERE 1 = 1${sql}
     ORDER BY hit.rank LIMIT ?`,
  ).all(
    postgres ? ftsToTsquery(query.match) : query.match,
    ...(query.topicId === undefined ? [] : [query.topicId]),
    newest,
    ...params,
    query.limit,
  ) as unknown as FtsHit[];
}

/** A message as search results show it, by id. */
export type MessageForResult = Omit<FtsHit, "rank">;

/** The messages with these ids that pass the filters (for semantic hits). */
export function messagesForResults(
  store: Store,
  messageIds: readonly string[],
  filters: SearchFilters,
): MessageForResult[] {
  if (messageIds.length === 0) return [];
  const { sql, params } = filterSql(filters, "m.topic_id");
  return store.stmt(
    `SELECT m.topic_id, t.name AS topic_name, m.message_id, m.seq, m.sender, m.message_type,
            m.created_at, m.content_markdown
     FROM json_each(?) AS ids
     JOIN messages AS m ON m.message_id = ids.value
     JOIN topics AS t ON t.topic_id = m.topic_id
     WHERE 1 = 1${sql}`,
  ).all(JSON.stringify(messageIds), ...params) as unknown as MessageForResult[];
}

/** Index rows that other programs' inserts left without code terms. */
export function pendingTerms(store: Store, limit: number): { rowid: number; content: string }[] {
  return store.stmt(
    `SELECT q.rowid AS rowid, f.content_markdown AS content
     FROM bus_terms_queue AS q JOIN bus_fts AS f ON f.rowid = q.rowid
     ORDER BY q.rowid LIMIT ?`,
  ).all(limit) as unknown as { rowid: number; content: string }[];
}

/** True when some index row waits for its code terms (a cheap read). */
export function hasPendingTerms(store: Store): boolean {
  return store.stmt("SELECT 1 FROM bus_terms_queue LIMIT 1").get() !== undefined;
}

/** Store the code terms of an index row and take it off the queue. */
export function setTerms(store: Store, { rowid, terms }: { rowid: number; terms: string }): void {
  store.stmt("UPDATE bus_fts SET terms = ? WHERE rowid = ?").run(terms, rowid);
  store.stmt("DELETE FROM bus_terms_queue WHERE rowid = ?").run(rowid);
}

function filterSql(
  filters: SearchFilters,
  topicColumn: string,
): { sql: string; params: (string | number)[] } {
  let sql = "";
  const params: (string | number)[] = [];
  if (filters.topicId !== undefined) {
    sql += ` AND ${topicColumn} = ?`;
    params.push(filters.topicId);
  }
  if (filters.sender !== undefined) {
    sql += " AND m.sender = ?";
    params.push(filters.sender);
  }
  if (filters.messageType !== undefined) {
    sql += " AND m.message_type = ?";
    params.push(filters.messageType);
  }
  if (filters.since !== undefined) {
    sql += " AND m.created_at >= ?";
    params.push(filters.since);
  }
  if (filters.until !== undefined) {
    sql += " AND m.created_at <= ?";
    params.push(filters.until);
  }
  return { sql, params };
}
