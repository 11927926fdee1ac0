/**
 * `agent-bus db copy`: a whole bus from one store to another, SQLite to
 * PostgreSQL or back (or file to file).
 *
 * Table by table, in key order, a page at a time: each page is read in one
 * read transaction of the source and written in one write transaction of
 * the target, so neither store is locked for long and memory stays bounded.
 * The source's unindexed messages are indexed first, and the index table
 * goes before the messages (SQLite's insert trigger then stands aside). Presence rows (waits, typing,
 * leases) are not copied: they describe processes of the source. The
 * target must hold no bus yet; at the end the row counts of every copied
 * table are compared.
 *
 * Nothing is dropped silently: before anything is written, every table of
 * the source must be either copied ({@linkcode COPIED_TABLES}) or listed,
 * with the reason, in {@linkcode NOT_COPIED}, and every column of a copied
 * table must exist in the target; otherwise the copy is refused
 * (`DB_SCHEMA_MISMATCH`, naming each table and column).
 *
 * @module
 */

import { BusError } from "../errors.ts";
import type { SqlValue, Store } from "./types.ts";
import { catchUpIndex } from "./search.ts";

/** One table to copy and the columns that order it. */
interface CopyTable {
  table: string;
  key: string[];
  /**
   * What to read in its place when the source is PostgreSQL: the same
   * columns, as the table's name. (Index rows number themselves there; the
   * copy numbers them, and their queue, as their messages, which every
   * store accepts: SQLite's full-text table must.)
   */
  postgresSource?: string;
}

/**
 * Tables in the order they are copied. `rowid` keys name SQLite's implicit
 * rowid, a real column in the PostgreSQL schema.
 */
export const COPIED_TABLES: readonly CopyTable[] = [
  { table: "topics", key: ["rowid"] },
  { table: "topic_seq", key: ["topic_id"] },
  {
    table: "bus_fts",
    key: ["rowid"],
    postgresSource: `(SELECT m.rowid AS rowid, f.content_markdown, f.terms, f.message_id,
                             f.topic_id
                      FROM bus_fts AS f JOIN messages AS m ON m.message_id = f.message_id)
                     AS bus_fts`,
  },
  {
    table: "bus_terms_queue",
    key: ["rowid"],
    postgresSource: `(SELECT m.rowid AS rowid FROM bus_terms_queue AS q
                      JOIN bus_fts AS f ON f.rowid = q.rowid
                      JOIN messages AS m ON m.message_id = f.message_id) AS bus_terms_queue`,
  },
  { table: "messages", key: ["rowid"] },
  { table: "cursors", key: ["topic_id", "agent_name"] },
  { table: "agent_name_reservations", key: ["topic_id", "agent_name"] },
  { table: "questions", key: ["rowid"] },
  { table: "bus_mailbox", key: ["rowid"] },
  { table: "bus_peers", key: ["name"] },
  { table: "bus_chunks", key: ["id"] },
  { table: "bus_embed_state", key: ["message_id", "model"] },
  { table: "bus_index_progress", key: ["model"] },
  { table: "bus_threads", key: ["topic_id"] },
  { table: "bus_agents", key: ["agent_id"] },
  { table: "bus_reply_tokens", key: ["token_hash"] },
  { table: "bus_refresh_requests", key: ["topic_id", "agent_id"] },
  { table: "bus_turns", key: ["topic_id", "agent_id"] },
  { table: "bus_chat_messages", key: ["message_id"] },
  { table: "bus_message_edits", key: ["message_id", "version"] },
  { table: "bus_reactions", key: ["message_id", "agent_id", "reaction"] },
  { table: "bus_attachments", key: ["message_id", "position"] },
  { table: "bus_templates", key: ["id"] },
];

/** Tables of a bus that are not copied row by row, and why. */
export const NOT_COPIED: Readonly<Record<string, string>> = {
  meta: "copied key by key, except the target's own schema versions",
  bus_schema_migrations: "PostgreSQL's record of its own migrations (the target keeps its own)",
  bus_fts_queue:
    "SQLite's queue of messages awaiting their index rows; the source is indexed first",
  bus_waiters: "processes of the source waiting now",
  bus_chat_waits: "agents of the source waiting now",
  bus_typing: "agents of the source typing now",
  bus_leases: "which process of the source indexes",
  bus_sessions: "MCP sessions of the source's processes",
  bus_session_topics: "MCP sessions of the source's processes",
  bus_session_questions: "MCP sessions of the source's processes",
  bus_hook_state: "what the source's client hooks last reported",
  bus_chat_events: "recent edits, reactions and agent changes, told to the source's event streams",
};

/** FTS5's own tables behind SQLite's `bus_fts` (copied through `bus_fts` itself). */
const FTS5_SHADOWS = new Set(
  ["_config", "_content", "_data", "_docsize", "_idx"].map((s) => `bus_fts${s}`),
);

/**
 * What a copy from `from` to `to` would drop: source tables neither copied
 * nor listed in {@linkcode NOT_COPIED}, and columns of copied tables the
 * target lacks. Empty when nothing would be lost. Call outside transactions.
 */
export function copyLosses(from: Store, to: Store): string[] {
  const losses: string[] = [];
  const copied = new Set(COPIED_TABLES.map((t) => t.table));
  for (const table of from.read(() => tablesOf(from))) {
    if (copied.has(table) || Object.hasOwn(NOT_COPIED, table) || FTS5_SHADOWS.has(table)) continue;
    losses.push(`table ${table} is not copied`);
  }
  for (const { table } of COPIED_TABLES) {
    const target = new Set(to.read(() => columnsOf(to, table)));
    for (const column of from.read(() => columnsOf(from, table))) {
      if (!target.has(column)) losses.push(`column ${table}.${column} is missing in the target`);
    }
  }
  return losses;
}

/** The tables of a store's schema. */
function tablesOf(store: Store): string[] {
  const sql = store.engine === "postgres"
    ? `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
    : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'";
  return store.stmt(sql).all().map((row) => String(row.name));
}

/** `meta` keys that belong to the target's own schema, never copied. */
const OWN_META = new Set(["schema_version", "bus_ext_version"]);

const PAGE_ROWS = 500;

/** Rows of one table in both stores after a copy. */
export interface CopiedTable {
  table: string;
  source: number;
  target: number;
}

/** Progress of {@linkcode copyBus}: rows copied so far of `total`. */
export type CopyProgress = (copied: number, total: number) => void;

/**
 * Copy every row of the bus in `from` into `to`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` when `to` already holds topics or messages,
 *   `DB_SCHEMA_MISMATCH` when the copy would drop a table or column (nothing is written),
 *   `INTERNAL_ERROR` when the counts differ at the end
 */
export async function copyBus(
  from: Store,
  to: Store,
  onProgress: CopyProgress = () => {},
): Promise<CopiedTable[]> {
  const existing = to.read(() => count(to, "topics") + count(to, "messages"));
  if (existing > 0) {
    throw new BusError(
      "INVALID_ARGUMENT",
      `The target ${to.path} already holds a bus (${existing} topics and messages); copy into ` +
        "an empty database, or wipe it first with agent-bus db wipe",
    );
  }
  const losses = copyLosses(from, to);
  if (losses.length > 0) {
    throw new BusError(
      "DB_SCHEMA_MISMATCH",
      `Nothing was copied: the copy would lose data (${losses.join("; ")}). Upgrade the target ` +
        "(agent-bus db migrate) or use the agent-bus version that wrote the source",
    );
  }
  // Messages the source has not indexed yet get their index rows there first, so they travel.
  await catchUpIndex(from);
  const total = from.read(() => COPIED_TABLES.reduce((sum, t) => sum + count(from, t.table), 0));
  let copied = 0;
  onProgress(0, total);
  const metaRows = from.read(() => from.stmt("SELECT key, value FROM meta").all());
  await to.immediate(() => {
    for (const row of metaRows) {
      if (OWN_META.has(String(row.key))) continue;
      to.stmt("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(
        row.key as SqlValue,
        row.value as SqlValue,
      );
    }
  });
  for (const spec of COPIED_TABLES) {
    const columns = from.read(() => columnsOf(from, spec.table))
      .filter((c) => to.read(() => columnsOf(to, spec.table)).includes(c));
    const select = selectPage(spec, columns, from.engine);
    const insert = `INSERT INTO ${spec.table} (${columns.join(", ")}) VALUES (${
      columns.map(() => "?").join(", ")
    })`;
    let after: SqlValue[] | undefined;
    for (;;) {
      const rows = from.read(() =>
        from.stmt(after ? select.next : select.first).all(...(after ?? []), PAGE_ROWS)
      );
      if (rows.length === 0) break;
      await to.immediate(() => {
        const statement = to.stmt(insert);
        for (const row of rows) statement.run(...columns.map((c) => row[c] as SqlValue));
      });
      const last = rows[rows.length - 1]!;
      after = spec.key.map((k) => last[k] as SqlValue);
      copied += rows.length;
      onProgress(copied, total);
      if (rows.length < PAGE_ROWS) break;
    }
  }
  if (to.engine === "postgres") await advanceIdentities(to);
  const result = COPIED_TABLES.map(({ table }) => ({
    table,
    source: from.read(() => count(from, table)),
    target: to.read(() => count(to, table)),
  }));
  const wrong = result.filter((r) => r.source !== r.target);
  if (wrong.length > 0) {
    throw new BusError(
      "INTERNAL_ERROR",
      `The copy is incomplete: ${
        wrong.map((r) => `${r.table} has ${r.target} of ${r.source} rows`).join(", ")
      }`,
    );
  }
  return result;
}

/**
 * Columns PostgreSQL numbers itself: after explicit values, its sequences
 * must move past them. (Not `bus_fts`'s: its numbers start above every
 * message's rowid, which is what the copy gives its rows.)
 */
const IDENTITIES = [
  ["topics", "rowid"],
  ["questions", "rowid"],
  ["bus_mailbox", "rowid"],
  ["bus_chunks", "id"],
] as const;

async function advanceIdentities(store: Store): Promise<void> {
  await store.immediate(() => {
    for (const [table, column] of IDENTITIES) {
      store.stmt(
        `SELECT setval(pg_get_serial_sequence('${table}', '${column}'),
                       COALESCE(MAX(${column}), 0) + 1, false) AS v FROM ${table}`,
      ).get();
    }
  });
}

function count(store: Store, table: string): number {
  return Number(store.stmt(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n);
}

/** The stored (not generated) columns of `table`, with `rowid` where it is a key. */
function columnsOf(store: Store, table: string): string[] {
  if (store.engine === "postgres") {
    return store.stmt(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER'
       ORDER BY ordinal_position`,
    ).all(table).map((row) => String(row.name));
  }
  const names = store.stmt("SELECT name FROM pragma_table_info(?)").all(table)
    .map((row) => String(row.name));
  const spec = COPIED_TABLES.find((t) => t.table === table);
  return spec?.key.includes("rowid") && !names.includes("rowid") ? ["rowid", ...names] : names;
}

/** The statements that read a page of the source: the first, and the next after a key. */
function selectPage(
  spec: CopyTable,
  columns: string[],
  engine: Store["engine"],
): { first: string; next: string } {
  const source = (engine === "postgres" ? spec.postgresSource : undefined) ?? spec.table;
  const list = columns.map((c) => c === "rowid" ? "rowid AS rowid" : c).join(", ");
  const order = `ORDER BY ${spec.key.join(", ")} LIMIT ?`;
  const after = spec.key.length === 1
    ? `${spec.key[0]} > ?`
    : `(${spec.key.join(", ")}) > (${spec.key.map(() => "?").join(", ")})`;
  return {
    first: `SELECT ${list} FROM ${source} ${order}`,
    next: `SELECT ${list} FROM ${source} WHERE ${after} ${order}`,
  };
}
