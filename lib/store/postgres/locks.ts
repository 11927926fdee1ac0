/**
 * What a write transaction locks on PostgreSQL, and in which order.
 *
 * Every write takes the bus lock ({@linkcode WRITE_LOCK}, a transaction-scoped
 * advisory lock) first. Most writes take it exclusively, as SQLite's
 * `BEGIN IMMEDIATE` does on one machine, so every rule the bus checks inside
 * a transaction holds across hosts unchanged.
 *
 * A write that says it concerns only some topics (`WriteOptions.topics`: a
 * `sync` round, a CLI post, a chatbus post or wait) is **scoped**: it takes the
 * bus lock shared, then each of its topics' locks ({@linkcode topicLockKey},
 * in key order), and runs its reads and decisions beside writers of other
 * topics. Rows keyed by one of its topics ({@linkcode TOPIC_TABLES}: cursors,
 * the seq counter, reply tokens, waits, turns) it writes under the topic
 * lock alone. Before its first write of anything else (a message, whose
 * position is `MAX(rowid) + 1`; the topics version; an agent's row) it takes
 * the commit lock ({@linkcode COMMIT_LOCK}), held to its commit: so message
 * positions still follow commit order (the console's event stream, `watch`
 * and the semantic indexer read `rowid > last` and would skip a row that
 * committed late), and shared rows are still changed by one writer at a time.
 * The statements of a send queue up and go out with `COMMIT`, so the commit
 * lock is held while the server runs them, never across a network round trip.
 *
 * The lock order is fixed (bus, topics in key order, commit, rows), and rows
 * keyed by a topic are written only under that topic's lock: no two writers
 * can wait for each other in a circle.
 *
 * @module
 */

import type { WireStatement } from "./bridge.ts";

/** The bus lock, a 64-bit advisory key ("abus"). */
export const WRITE_LOCK = 0x61627573;
/** The commit lock, taken by a scoped write before its first write outside its topics ("abuc"). */
export const COMMIT_LOCK = 0x61627563;
/** The class of topic locks, the first of their two 32-bit keys ("abut"). */
const TOPIC_LOCK_CLASS = 0x61627574;

/**
 * The tables whose rows are each keyed by one topic: a scoped write may
 * change them under its topic locks alone (only rows of its own topics, which
 * {@linkcode statementScope} checks by the statement's shape).
 */
export const TOPIC_TABLES: ReadonlySet<string> = new Set([
  "topic_seq",
  "cursors",
  "bus_waiters",
  "bus_reply_tokens",
  "bus_refresh_requests",
  "bus_chat_waits",
  "bus_typing",
  "bus_turns",
]);

/** What a statement does, as far as locks are concerned. */
export type StatementScope = "read" | "topic" | "bus";

const WRITE_TARGET = /^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)/i;
const BY_TOPIC = /\bWHERE\s+topic_id\s*=\s*\$\d+/i;

/**
 * Whether `sql` (PostgreSQL's dialect, one of our own statements) only reads,
 * writes rows of one topic (an insert into a topic table, or an update or
 * delete of one whose condition is `topic_id = $n AND …`), or may write
 * anything else. A `WITH` may write: it counts as anything.
 */
export function statementScope(sql: string): StatementScope {
  if (/^\s*SELECT\b/i.test(sql)) return "read";
  const table = WRITE_TARGET.exec(sql)?.[1]?.toLowerCase();
  if (table === undefined || !TOPIC_TABLES.has(table)) return "bus";
  if (/^\s*INSERT\b/i.test(sql)) return "topic";
  const where = BY_TOPIC.exec(sql);
  return where && !/\bOR\b/i.test(outsideParentheses(sql.slice(where.index))) ? "topic" : "bus";
}

/** `text` without what its parentheses enclose (one pass). */
function outsideParentheses(text: string): string {
  let depth = 0;
  let kept = "";
  for (const char of text) {
    if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0) kept += char;
  }
  return kept;
}

/** The topic lock's second key for `topicId` (32-bit FNV-1a, signed as PostgreSQL's `int4`). */
export function topicLockKey(topicId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < topicId.length; i++) {
    hash ^= topicId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * The locks a write transaction takes with its `BEGIN`: the bus lock
 * exclusively, or, for a write scoped to `topics`, shared and then those
 * topics' locks in key order.
 */
export function lockStatements(topics: readonly string[] | undefined): WireStatement[] {
  if (topics === undefined) {
    return [{ sql: `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`, params: [] }];
  }
  const keys = [...new Set(topics.map(topicLockKey))].sort((a, b) => a - b);
  return [
    { sql: `SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK})`, params: [] },
    ...keys.map((key) => ({
      sql: `SELECT pg_advisory_xact_lock(${TOPIC_LOCK_CLASS}, ${key})`,
      params: [],
    })),
  ];
}

/** The statement that takes the commit lock (see the module's notes). */
export const COMMIT_LOCK_STATEMENT: WireStatement = {
  sql: `SELECT pg_advisory_xact_lock(${COMMIT_LOCK})`,
  params: [],
};
