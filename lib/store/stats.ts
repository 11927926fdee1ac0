/**
 * SQL for `agent-bus db stats`: row counts of every table family and the
 * facts the engine keeps (SQLite's pages and journal, PostgreSQL's version
 * and database size).
 *
 * @module
 */

import type { Store } from "./types.ts";
import { unindexedCount } from "./search.ts";

/** What `db stats` reports from inside the database. */
export interface DbCounts {
  topics: { open: number; closed: number };
  messages: number;
  questions: { pending: number; answered: number; cancelled: number };
  mail: { unread: number; total: number };
  /** Messages not yet in the full-text index, or there without their code terms. */
  search_backlog: number;
  vectors: { chunks: number; models: number };
  /** SQLite's facts about the file (SQLite only). */
  sqlite?: {
    version: string;
    page_size: number;
    page_count: number;
    freelist_count: number;
    journal_mode: string;
  };
  /** PostgreSQL's facts about the database (PostgreSQL only). */
  postgres?: { version: string; database_bytes: number };
}

/** Count everything; run inside `store.read()`. */
export function dbCounts(store: Store): DbCounts {
  const one = (sql: string): number =>
    Number(Object.values(store.stmt(sql).get() as object)[0] ?? 0);
  const byStatus = (sql: string): Map<string, number> =>
    new Map((store.stmt(sql).all() as { k: string; n: number }[]).map((r) => [r.k, r.n]));
  const topics = byStatus("SELECT status AS k, COUNT(*) AS n FROM topics GROUP BY status");
  const questions = byStatus("SELECT status AS k, COUNT(*) AS n FROM questions GROUP BY status");
  const counts = {
    topics: { open: topics.get("open") ?? 0, closed: topics.get("closed") ?? 0 },
    messages: one("SELECT COUNT(*) FROM messages"),
    questions: {
      pending: questions.get("pending") ?? 0,
      answered: questions.get("answered") ?? 0,
      cancelled: questions.get("cancelled") ?? 0,
    },
    mail: {
      unread: one("SELECT COUNT(*) FROM bus_mailbox WHERE done = 0"),
      total: one("SELECT COUNT(*) FROM bus_mailbox"),
    },
    search_backlog: one("SELECT COUNT(*) FROM bus_terms_queue") + unindexedCount(store),
    vectors: {
      chunks: one("SELECT COUNT(*) FROM bus_chunks"),
      models: one("SELECT COUNT(DISTINCT model) FROM bus_chunks"),
    },
  };
  if (store.engine === "postgres") {
    const version = store.stmt("SELECT current_setting('server_version') AS v").get()!.v;
    const size = one("SELECT pg_database_size(current_database())");
    return { ...counts, postgres: { version: String(version), database_bytes: size } };
  }
  return {
    ...counts,
    sqlite: {
      version: String(Object.values(store.stmt("SELECT sqlite_version()").get() as object)[0]),
      page_size: one("PRAGMA page_size"),
      page_count: one("PRAGMA page_count"),
      freelist_count: one("PRAGMA freelist_count"),
      journal_mode: String(Object.values(store.stmt("PRAGMA journal_mode").get() as object)[0]),
    },
  };
}
