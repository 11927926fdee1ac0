/**
 * SQL for full-text search over `bus_fts`, and for the queues that fill it.
 *
 * On SQLite a message's index row is written after the send, in batches
 * (`catchUpIndex`): FTS5 costs about 0.2 ms per transaction that touches
 * it, a third of a one-message send, and a hundredth of that per row in a
 * batch of a hundred. An insert only queues its rowid (`bus_fts_queue`,
 * by trigger, so other programs' inserts are queued too), and one process
 * (the indexer) writes the rows.
 *
 * A search never writes the shared file and never waits for the indexer or
 * any other writer: inside its read snapshot it brings a private index of
 * the queued messages (`temp.bus_fts_tail`, one per connection, kept from
 * search to search so only newly queued rows are tokenized) to exactly the
 * snapshot's queue, and searches both. A message is in the index or in the
 * queue in every snapshot (the indexer moves it in one transaction), so a
 * search sees every committed message whatever the indexer is doing: slow,
 * killed mid-batch, or holding a lease it never uses. Writing a TEMP table
 * takes no lock on the database file. PostgreSQL writes the row with the
 * message. Rows another store left without code terms wait in
 * `bus_terms_queue`.
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

import type { Store } from "./types.ts";
import { ftsToTsquery } from "./postgres/tsquery.ts";
import { codeTerms } from "./terms.ts";

/**
 * Rows, and characters of body, written per transaction by
 * {@linkcode catchUpIndex}: FTS5 tokenizes inside the write lock, so a batch
 * holds it a few milliseconds at most, however long the bodies (a single
 * longer body goes alone).
 */
const INDEX_BATCH_ROWS = 100;
const INDEX_BATCH_CHARS = 128 * 1024;

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
  if (store.engine === "postgres") {
    if (query.newest !== undefined) return newestHits(store, query, query.newest, "bus_fts");
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
    ).all<FtsHit>(ftsToTsquery(query.match), ...params, query.limit);
  }
  const indexed = sqliteHits(store, query, "bus_fts");
  if (!syncTail(store)) return indexed;
  // The queued messages' hits, merged by rank (each table's bm25 uses its own statistics).
  const tail = sqliteHits(store, query, "bus_fts_tail");
  return [...indexed, ...tail].sort((a, b) => a.rank - b.rank).slice(0, query.limit);
}

/** {@linkcode ftsSearch} on one SQLite full-text table: the shared index or this connection's tail. */
function sqliteHits(store: Store, query: FtsQuery, table: "bus_fts" | "bus_fts_tail"): FtsHit[] {
  if (query.newest !== undefined) return newestHits(store, query, query.newest, table);
  const { sql, params } = filterSql(query, `${table}.topic_id`);
  return store.stmt(
    `SELECT m.topic_id, t.name AS topic_name, m.message_id, m.seq, m.sender, m.message_type,
            m.created_at, ${table}.rank AS rank, m.content_markdown
     FROM ${table}
     JOIN messages AS m ON m.message_id = ${table}.message_id
     JOIN topics AS t ON t.topic_id = m.topic_id
     WHERE ${table} MATCH ?${sql}
     ORDER BY ${table}.rank LIMIT ?`,
  ).all<FtsHit>(
    query.match,
    ...params,
    query.limit,
  );
}

/**
 * Bring this connection's index of the queued messages (`temp.bus_fts_tail`)
 * to the current snapshot: rows that left the queue (indexed or deleted) or
 * whose body changed go, newly queued ones come in with their code terms.
 * Writes only the TEMP database, so it runs inside a read and waits for no
 * writer. Call inside a read.
 *
 * @returns whether the tail holds any row
 */
function syncTail(store: Store): boolean {
  if (store.stmt("SELECT 1 FROM bus_fts_queue LIMIT 1").get() === undefined) {
    if (tailExists(store) && store.stmt("SELECT 1 FROM temp.bus_fts_tail LIMIT 1").get()) {
      store.stmt("DELETE FROM temp.bus_fts_tail").run();
    }
    return false;
  }
  if (!tailExists(store)) {
    store.stmt(
      `CREATE VIRTUAL TABLE temp.bus_fts_tail USING fts5(
         content_markdown, terms, message_id UNINDEXED, topic_id UNINDEXED,
         tokenize = 'porter unicode61 remove_diacritics 2')`,
    ).run();
    store.stmt(
      "INSERT INTO temp.bus_fts_tail (bus_fts_tail, rank) VALUES ('rank', 'bm25(1.0, 0.5)')",
    )
      .run();
  }
  store.stmt(
    `DELETE FROM temp.bus_fts_tail WHERE rowid NOT IN (SELECT rowid FROM bus_fts_queue)
       OR rowid IN (SELECT t.rowid FROM temp.bus_fts_tail AS t JOIN messages AS m
                    ON m.rowid = t.rowid WHERE m.content_markdown <> t.content_markdown)`,
  ).run();
  // Newly queued rows, a bounded page at a time (a long backlog never sits in memory whole).
  const page = store.stmt(
    `SELECT q.rowid AS rowid, m.content_markdown AS content, m.message_id, m.topic_id
     FROM bus_fts_queue AS q JOIN messages AS m ON m.rowid = q.rowid
     WHERE q.rowid > ? AND q.rowid NOT IN (SELECT rowid FROM temp.bus_fts_tail)
     ORDER BY q.rowid LIMIT ?`,
  );
  const insert = store.stmt(
    `INSERT INTO temp.bus_fts_tail (rowid, content_markdown, terms, message_id, topic_id)
     VALUES (?, ?, ?, ?, ?)`,
  );
  for (let after = 0;;) {
    const fresh = page.all<{
      rowid: number;
      content: string;
      message_id: string;
      topic_id: string;
    }>(after, INDEX_BATCH_ROWS);
    for (const row of fresh) {
      insert.run(row.rowid, row.content, codeTerms(row.content), row.message_id, row.topic_id);
    }
    if (fresh.length < INDEX_BATCH_ROWS) return true;
    after = fresh.at(-1)!.rowid;
  }
}

function tailExists(store: Store): boolean {
  return store.stmt("SELECT 1 FROM temp.sqlite_master WHERE name = 'bus_fts_tail'").get() !==
    undefined;
}

/**
 * The best hits among the `newest` most recent matches; the filters apply
 * after (so a restrictive filter may leave fewer than `limit` of them).
 */
function newestHits(
  store: Store,
  query: FtsQuery,
  newest: number,
  table: "bus_fts" | "bus_fts_tail",
): FtsHit[] {
  const postgres = store.engine === "postgres";
  const inTopic = query.topicId === undefined ? "" : ` AND ${postgres ? "f." : ""}topic_id = ?`;
  const matches = postgres
    ? `SELECT f.message_id, -ts_rank_cd('{0.1, 0.2, 0.5, 1.0}', f.tsv, q.q) AS rank
       FROM (SELECT to_tsquery('bus_english', ?) AS q) AS q
       JOIN bus_fts AS f ON f.tsv @@ q.q
       WHERE 1 = 1${inTopic} ORDER BY f.rowid DESC LIMIT ?`
    : `SELECT message_id, rank FROM ${table} WHERE ${table} MATCH ?${inTopic}
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
  ).all<FtsHit>(
    postgres ? ftsToTsquery(query.match) : query.match,
    ...(query.topicId === undefined ? [] : [query.topicId]),
    newest,
    ...params,
    query.limit,
  );
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
  ).all<MessageForResult>(JSON.stringify(messageIds), ...params);
}

/**
 * True when this store writes a message's index row in the send's own
 * transaction (PostgreSQL), so the send must bring the code terms.
 */
export function indexesWithTheSend(store: Store): boolean {
  return store.engine === "postgres";
}

/** The code terms a send of `content` must bring: only where its index row goes in with it. */
export function termsForSend(store: Store, content: string): string {
  return indexesWithTheSend(store) ? codeTerms(content) : "";
}

/**
 * Write the index rows of every queued message, a batch per short
 * transaction, deriving code terms outside the write lock (nothing to do on
 * PostgreSQL).
 *
 * @returns how many rows were written
 */
export async function catchUpIndex(store: Store): Promise<number> {
  if (indexesWithTheSend(store)) return 0;
  let written = 0;
  for (;;) {
    const rows = store.read(() =>
      store.stmt(
        `SELECT rowid, content FROM (
           SELECT q.rowid AS rowid, m.content_markdown AS content,
                  SUM(length(m.content_markdown)) OVER (ORDER BY q.rowid) AS upto
           FROM bus_fts_queue AS q JOIN messages AS m ON m.rowid = q.rowid
           ORDER BY q.rowid LIMIT ?)
         WHERE upto - length(content) < ? ORDER BY rowid`,
      ).all<{ rowid: number; content: string }>(INDEX_BATCH_ROWS, INDEX_BATCH_CHARS)
    );
    if (rows.length === 0) return written;
    const terms = rows.map((row) => codeTerms(row.content));
    const batch = await store.immediate(() => {
      const done = { written: 0, dequeued: 0 };
      rows.forEach((row, i) => {
        const one = indexRow(store, { ...row, terms: terms[i]! });
        done.written += one.written;
        done.dequeued += one.dequeued;
      });
      return done;
    });
    written += batch.written;
    // Every body of the batch changed meanwhile: the next round takes them (no spinning here).
    if (batch.dequeued === 0) return written;
  }
}

/**
 * Index one queued message and take it off the queue, unless its body
 * changed since it was read (it stays queued); a message that is gone, or
 * was indexed by another process meanwhile, just leaves the queue.
 */
function indexRow(
  store: Store,
  { rowid, content, terms }: { rowid: number; content: string; terms: string },
): { written: number; dequeued: number } {
  const { changes: written } = store.stmt(
    `INSERT INTO bus_fts (rowid, content_markdown, terms, message_id, topic_id)
     SELECT m.rowid, m.content_markdown, ?, m.message_id, m.topic_id FROM messages AS m
     WHERE m.rowid = ? AND m.content_markdown = ?
       AND NOT EXISTS (SELECT 1 FROM bus_fts WHERE rowid = m.rowid)`,
  ).run(terms, rowid, content);
  const { changes: dequeued } = store.stmt(
    `DELETE FROM bus_fts_queue WHERE rowid = ?1
     AND (EXISTS (SELECT 1 FROM bus_fts WHERE rowid = ?1)
          OR NOT EXISTS (SELECT 1 FROM messages WHERE rowid = ?1))`,
  ).run(rowid);
  return { written: Number(written), dequeued: Number(dequeued) };
}

/** True when some message waits for its full-text row (a cheap read; never on PostgreSQL). */
export function hasUnindexed(store: Store): boolean {
  if (indexesWithTheSend(store)) return false;
  return store.stmt("SELECT 1 FROM bus_fts_queue LIMIT 1").get() !== undefined;
}

/** Messages not yet in the full-text index (always 0 on PostgreSQL). */
export function unindexedCount(store: Store): number {
  if (indexesWithTheSend(store)) return 0;
  const row = store.stmt("SELECT COUNT(*) AS n FROM bus_fts_queue").get<{ n: number }>()!;
  return Number(row.n);
}

/** Index rows that other programs' inserts left without code terms. */
export function pendingTerms(store: Store, limit: number): { rowid: number; content: string }[] {
  return store.stmt(
    `SELECT q.rowid AS rowid, f.content_markdown AS content
     FROM bus_terms_queue AS q JOIN bus_fts AS f ON f.rowid = q.rowid
     ORDER BY q.rowid LIMIT ?`,
  ).all<{ rowid: number; content: string }>(limit);
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
