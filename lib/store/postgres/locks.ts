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
 * topics. Rows keyed by one of its topics (cursors, the seq counter, reply
 * tokens, waits, turns) it writes under the topic lock alone, with
 * statements declared so where they are written ({@linkcode TOPIC_ROWS}). Before its first write of anything else (a message, whose
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

import { type DeclaredScope, TOPIC_ROWS } from "../types.ts";
import type { WireStatement } from "./bridge.ts";

/** The bus lock, a 64-bit advisory key ("abus"). */
export const WRITE_LOCK = 0x61627573;
/** The commit lock, taken by a scoped write before its first write outside its topics ("abuc"). */
export const COMMIT_LOCK = 0x61627563;
/** The class of topic locks, the first of their two 32-bit keys ("abut"). */
export const TOPIC_LOCK_CLASS = 0x61627574;

/** What a statement does, as far as locks are concerned. */
export type StatementScope = "read" | "topic" | "bus";

/**
 * How `sql` (one of our own statements) takes part in a write's locks: as
 * its writer declared it ({@linkcode TOPIC_ROWS}: rows of the write's own
 * topics only), else as a read when it is a `SELECT`, else as a write of
 * anything (under the commit lock, the safe side). No scope is read from
 * the rest of its text; the test clusters check what each write touches
 * against the locks it holds (`lock_checks.ts`).
 */
export function statementScope(sql: string, declared: DeclaredScope | undefined): StatementScope {
  if (declared === TOPIC_ROWS) return "topic";
  return /^\s*SELECT\b/i.test(sql) ? "read" : "bus";
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
