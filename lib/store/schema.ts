/**
 * The database schema: the seed's tables verbatim, and our own additions.
 *
 * `CORE_DDL` is Agent Bus v6.3 section 3.1, column for column and index for
 * index, so a database made by the original implementation opens in place
 * and both programs can share one file. Columns the seed marks `NULL` are
 * nullable; the rest are `NOT NULL`.
 *
 * Everything of ours lives in `bus_*` objects created by the numbered
 * migrations in `EXT_MIGRATIONS`, recorded in `meta` under
 * `EXT_VERSION_KEY`. Triggers may only use built-in SQL: the original
 * program writes to the same tables and would fail on a function only we
 * register.
 *
 * @module
 */

/** The seed's schema version, stored in `meta.schema_version`. */
export const SCHEMA_VERSION = "6";

/** The `meta` key under which our own migration level is stored. */
export const EXT_VERSION_KEY = "bus_ext_version";

/** Seed section 3.1. Every statement is idempotent. */
export const CORE_DDL = `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT
);

CREATE TABLE IF NOT EXISTS topics (
  topic_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at REAL NOT NULL,
  status TEXT NOT NULL,
  closed_at REAL NULL,
  close_reason TEXT NULL,
  metadata_json TEXT NULL
);
CREATE INDEX IF NOT EXISTS idx_topics_name_status_created_at
  ON topics (name, status, created_at);

CREATE TABLE IF NOT EXISTS topic_seq (
  topic_id TEXT PRIMARY KEY,
  next_seq INTEGER NOT NULL,
  updated_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS messages (
  message_id TEXT PRIMARY KEY,
  topic_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  sender TEXT NOT NULL,
  message_type TEXT NOT NULL,
  reply_to TEXT NULL,
  content_markdown TEXT NOT NULL,
  metadata_json TEXT NULL,
  client_message_id TEXT NULL,
  created_at REAL NOT NULL,
  UNIQUE (topic_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_messages_topic_sender_client_message_id
  ON messages (topic_id, sender, client_message_id) WHERE client_message_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_messages_topic_seq ON messages (topic_id, seq);
CREATE INDEX IF NOT EXISTS idx_messages_topic_reply_to ON messages (topic_id, reply_to);

CREATE TABLE IF NOT EXISTS cursors (
  topic_id TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  updated_at REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_name)
);

CREATE TABLE IF NOT EXISTS agent_name_reservations (
  topic_id TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  reclaim_token TEXT NOT NULL,
  created_at REAL NOT NULL,
  last_claimed_at REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_name)
);
`;

/** Names `CORE_DDL` creates; a seed-6 database missing one gets it added. */
export const CORE_OBJECTS = [
  "meta",
  "topics",
  "idx_topics_name_status_created_at",
  "topic_seq",
  "messages",
  "idx_messages_topic_seq",
  "idx_messages_topic_reply_to",
  "cursors",
  "agent_name_reservations",
] as const;

/** One forward step of our own schema. `sql` runs inside the caller's `BEGIN IMMEDIATE`. */
export interface ExtMigration {
  version: number;
  description: string;
  sql: string;
}

/**
 * Our additions, in order. Never edit a published step: add a new one. The
 * FTS table keeps its own copy of the body (not `content=messages`) because
 * `VACUUM` may renumber the rowids of a table without an INTEGER PRIMARY KEY.
 */
export const EXT_MIGRATIONS: readonly ExtMigration[] = [
  {
    version: 1,
    description: "full-text index of message bodies, kept current by triggers",
    sql: `
CREATE VIRTUAL TABLE IF NOT EXISTS bus_fts USING fts5(
  content_markdown,
  message_id UNINDEXED,
  topic_id UNINDEXED,
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS bus_fts_after_insert AFTER INSERT ON messages BEGIN
  INSERT INTO bus_fts (rowid, content_markdown, message_id, topic_id)
  VALUES (new.rowid, new.content_markdown, new.message_id, new.topic_id);
END;
CREATE TRIGGER IF NOT EXISTS bus_fts_after_delete AFTER DELETE ON messages BEGIN
  DELETE FROM bus_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS bus_fts_after_update AFTER UPDATE OF content_markdown ON messages BEGIN
  DELETE FROM bus_fts WHERE rowid = old.rowid;
  INSERT INTO bus_fts (rowid, content_markdown, message_id, topic_id)
  VALUES (new.rowid, new.content_markdown, new.message_id, new.topic_id);
END;
DELETE FROM bus_fts;
INSERT INTO bus_fts (rowid, content_markdown, message_id, topic_id)
  SELECT rowid, content_markdown, message_id, topic_id FROM messages;
`,
  },
];

/** The newest migration level this build knows. */
export const EXT_VERSION = EXT_MIGRATIONS.length;
