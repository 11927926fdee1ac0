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
  {
    version: 2,
    description: "index code by its parts: a terms column beside the body, filled by us",
    // Our own inserts write their index row first (with terms) and the
    // trigger skips them; rows the trigger adds for other programs' inserts
    // get their terms later, from bus_terms_queue. bus_code_terms() is a
    // function our connection registers; only this one-off backfill calls it.
    sql: `
DROP TRIGGER IF EXISTS bus_fts_after_insert;
DROP TRIGGER IF EXISTS bus_fts_after_delete;
DROP TRIGGER IF EXISTS bus_fts_after_update;
DROP TABLE IF EXISTS bus_fts;
CREATE VIRTUAL TABLE bus_fts USING fts5(
  content_markdown,
  terms,
  message_id UNINDEXED,
  topic_id UNINDEXED,
  tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO bus_fts (bus_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5)');
CREATE TABLE IF NOT EXISTS bus_terms_queue (rowid INTEGER PRIMARY KEY);
CREATE TRIGGER bus_fts_after_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM bus_fts WHERE rowid = new.rowid) BEGIN
  INSERT INTO bus_fts (rowid, content_markdown, terms, message_id, topic_id)
  VALUES (new.rowid, new.content_markdown, NULL, new.message_id, new.topic_id);
  INSERT OR IGNORE INTO bus_terms_queue (rowid) VALUES (new.rowid);
END;
CREATE TRIGGER bus_fts_after_delete AFTER DELETE ON messages BEGIN
  DELETE FROM bus_fts WHERE rowid = old.rowid;
  DELETE FROM bus_terms_queue WHERE rowid = old.rowid;
END;
CREATE TRIGGER bus_fts_after_update AFTER UPDATE OF content_markdown ON messages BEGIN
  DELETE FROM bus_fts WHERE rowid = old.rowid;
  INSERT INTO bus_fts (rowid, content_markdown, terms, message_id, topic_id)
  VALUES (new.rowid, new.content_markdown, NULL, new.message_id, new.topic_id);
  INSERT OR IGNORE INTO bus_terms_queue (rowid) VALUES (new.rowid);
END;
INSERT INTO bus_fts (rowid, content_markdown, terms, message_id, topic_id)
  SELECT rowid, content_markdown, bus_code_terms(content_markdown), message_id, topic_id
  FROM messages;
`,
  },
  {
    version: 3,
    description: "semantic index: chunk vectors per model, indexing progress, the indexer lease",
    sql: `
CREATE TABLE IF NOT EXISTS bus_chunks (
  id INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL,
  model TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  topic_id TEXT NOT NULL,
  start_char INTEGER NOT NULL,
  end_char INTEGER NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE (message_id, model, chunk)
);
CREATE INDEX IF NOT EXISTS bus_chunks_model_id ON bus_chunks (model, id);
CREATE TABLE IF NOT EXISTS bus_embed_state (
  message_id TEXT NOT NULL,
  model TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error TEXT NULL,
  updated_at REAL NOT NULL,
  PRIMARY KEY (message_id, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_index_progress (
  model TEXT PRIMARY KEY,
  high_water INTEGER NOT NULL,
  low_water INTEGER NOT NULL,
  updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bus_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at REAL NOT NULL
);
INSERT OR IGNORE INTO meta (key, value) VALUES ('bus_vectors_epoch', '0');
CREATE TRIGGER IF NOT EXISTS bus_chunks_after_message_delete AFTER DELETE ON messages BEGIN
  DELETE FROM bus_chunks WHERE message_id = old.message_id;
  DELETE FROM bus_embed_state WHERE message_id = old.message_id;
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'bus_vectors_epoch';
END;
CREATE TRIGGER IF NOT EXISTS bus_chunks_after_message_update AFTER UPDATE OF content_markdown ON messages BEGIN
  DELETE FROM bus_chunks WHERE message_id = old.message_id;
  DELETE FROM bus_embed_state WHERE message_id = old.message_id;
  UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'bus_vectors_epoch';
END;
`,
  },
  {
    version: 4,
    description: "direct mail: per-agent FIFO mailboxes and the registry of running peers",
    // Columns of seed 003's mailbox, plus when it was popped, where it came
    // from (http, peer-bus, cli), and whether content is text or JSON.
    sql: `
CREATE TABLE IF NOT EXISTS bus_mailbox (
  id TEXT PRIMARY KEY,
  from_agent TEXT NOT NULL,
  to_agent TEXT NOT NULL,
  content TEXT NOT NULL,
  created REAL NOT NULL,
  done INTEGER NOT NULL DEFAULT 0,
  processed REAL NULL,
  source TEXT NOT NULL,
  format TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bus_mailbox_unread ON bus_mailbox (to_agent, done, created);
CREATE TABLE IF NOT EXISTS bus_peers (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  started_at REAL NOT NULL,
  expires_at REAL NOT NULL
);
`,
  },
  {
    version: 5,
    description: "teacher/student questions (seed 001, spec v3.1)",
    // The seed's table and index, verbatim, over the shared topics table.
    sql: `
CREATE TABLE IF NOT EXISTS questions (
  question_id TEXT PRIMARY KEY,
  topic_id TEXT NOT NULL,
  asked_by TEXT NOT NULL,
  question_text TEXT NOT NULL,
  asked_at REAL NOT NULL,
  status TEXT NOT NULL,
  cancel_reason TEXT NULL,
  answered_at REAL NULL,
  answered_by TEXT NULL,
  answer_payload_json TEXT NULL
);
CREATE INDEX IF NOT EXISTS idx_questions_topic_status_askedat
  ON questions (topic_id, status, asked_at);
`,
  },
  {
    version: 6,
    description: "who is waiting in sync (the web console's presence)",
    // Written in the transaction that starts a wait and cleared by the one that
    // ends it; `until` bounds a row left behind by a crashed process.
    sql: `
CREATE TABLE IF NOT EXISTS bus_waiters (
  topic_id TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  until REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_name)
);
`,
  },
  {
    version: 7,
    description: "find mail by sender (whether a peer name was ever used)",
    sql: `
CREATE INDEX IF NOT EXISTS bus_mailbox_from ON bus_mailbox (from_agent);
`,
  },
  {
    version: 8,
    description:
      "the AgentChatBus dialect (seed 002): threads, agents, reply tokens, edits, reactions",
    // A thread is a topic; these tables hold what the chatbus dialect adds to it. Tokens are
    // stored as SHA-256 hashes. Rows that hang off a message go when the message goes. Tables
    // keyed by text are WITHOUT ROWID: a post then dirties one page fewer in each.
    sql: `
CREATE TABLE IF NOT EXISTS bus_threads (
  topic_id TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  summary TEXT NULL,
  system_prompt TEXT NULL,
  template_id TEXT NULL,
  creator_admin_id TEXT NULL,
  creator_admin_name TEXT NULL,
  updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bus_agents (
  agent_id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  display_name TEXT NULL,
  ide TEXT NOT NULL,
  model TEXT NOT NULL,
  description TEXT NOT NULL,
  capabilities_json TEXT NOT NULL,
  skills_json TEXT NOT NULL,
  emoji TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  registered_at REAL NOT NULL,
  last_heartbeat REAL NOT NULL,
  last_activity TEXT NOT NULL,
  last_activity_time REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bus_reply_tokens (
  token_hash TEXT PRIMARY KEY,
  topic_id TEXT NOT NULL,
  agent_id TEXT NULL,
  source TEXT NOT NULL,
  issued_at REAL NOT NULL,
  consumed_at REAL NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS bus_reply_tokens_agent ON bus_reply_tokens (topic_id, agent_id, consumed_at);
CREATE TABLE IF NOT EXISTS bus_refresh_requests (
  topic_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_chat_messages (
  message_id TEXT PRIMARY KEY,
  author_id TEXT NULL,
  role TEXT NOT NULL,
  priority TEXT NOT NULL,
  edit_version INTEGER NOT NULL DEFAULT 0,
  edited_at REAL NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_message_edits (
  message_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  old_content TEXT NOT NULL,
  edited_by TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (message_id, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_reactions (
  message_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  reaction TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (message_id, agent_id, reaction)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_attachments (
  message_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (message_id, position)
);
CREATE TABLE IF NOT EXISTS bus_templates (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NULL,
  system_prompt TEXT NULL,
  default_metadata_json TEXT NULL,
  created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bus_chat_waits (
  topic_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  entered_at REAL NOT NULL,
  timeout_ms INTEGER NOT NULL,
  until REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_typing (
  topic_id TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  until REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_name)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS bus_chat_after_message_delete AFTER DELETE ON messages BEGIN
  DELETE FROM bus_chat_messages WHERE message_id = old.message_id;
  DELETE FROM bus_message_edits WHERE message_id = old.message_id;
  DELETE FROM bus_reactions WHERE message_id = old.message_id;
  DELETE FROM bus_attachments WHERE message_id = old.message_id;
END;
`,
  },
  {
    version: 9,
    description: "who each MCP session is, for the clients' hooks (issue 17)",
    // A stdio server records itself at start and deletes its rows when it ends; the hooks,
    // separate processes of the same client, find their session by process ancestry and cwd.
    // `bus_hook_state` keeps what a client session's stop hook last reported (loop safety).
    sql: `
CREATE TABLE IF NOT EXISTS bus_sessions (
  session_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  server_pid INTEGER NOT NULL,
  client_pid INTEGER NOT NULL,
  cwd TEXT NOT NULL,
  profile TEXT NOT NULL,
  agent TEXT NULL,
  started_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS bus_sessions_host ON bus_sessions (host, client_pid);
CREATE TABLE IF NOT EXISTS bus_session_topics (
  session_id TEXT NOT NULL,
  topic_id TEXT NOT NULL,
  agent_name TEXT NOT NULL,
  PRIMARY KEY (session_id, topic_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_session_questions (
  session_id TEXT NOT NULL,
  question_id TEXT NOT NULL,
  PRIMARY KEY (session_id, question_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS bus_questions_pending ON questions (status, asked_at);
CREATE TABLE IF NOT EXISTS bus_hook_state (
  hook_session TEXT PRIMARY KEY,
  blocks INTEGER NOT NULL,
  reported TEXT NOT NULL,
  updated_at REAL NOT NULL
) WITHOUT ROWID;
`,
  },
  {
    version: 10,
    description: "the full-text index is written after the send, in batches (issue 18)",
    // FTS5 costs about 0.2 ms per transaction that touches it, a third of a one-message
    // send; in batches of a hundred the same rows cost a hundredth of that each. Inserts
    // now only queue their rowid; the indexer writes the index rows, and every search
    // brings the index up to date first, so a search still sees every committed message.
    // A copy writes index rows before the messages, so the trigger still stands aside.
    // Rows that waited for their code terms are indexed again, whole.
    sql: `
CREATE TABLE IF NOT EXISTS bus_fts_queue (rowid INTEGER PRIMARY KEY);
DROP TRIGGER IF EXISTS bus_fts_after_insert;
DROP TRIGGER IF EXISTS bus_fts_after_delete;
DROP TRIGGER IF EXISTS bus_fts_after_update;
CREATE TRIGGER bus_fts_after_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM bus_fts WHERE rowid = new.rowid) BEGIN
  INSERT OR IGNORE INTO bus_fts_queue (rowid) VALUES (new.rowid);
END;
CREATE TRIGGER bus_fts_after_delete AFTER DELETE ON messages BEGIN
  DELETE FROM bus_fts WHERE rowid = old.rowid;
  DELETE FROM bus_terms_queue WHERE rowid = old.rowid;
  DELETE FROM bus_fts_queue WHERE rowid = old.rowid;
END;
CREATE TRIGGER bus_fts_after_update AFTER UPDATE OF content_markdown ON messages BEGIN
  DELETE FROM bus_fts WHERE rowid = old.rowid;
  DELETE FROM bus_terms_queue WHERE rowid = old.rowid;
  INSERT OR IGNORE INTO bus_fts_queue (rowid) VALUES (new.rowid);
END;
INSERT OR IGNORE INTO bus_fts_queue (rowid) SELECT rowid FROM bus_terms_queue;
DELETE FROM bus_fts WHERE rowid IN (SELECT rowid FROM bus_terms_queue);
DELETE FROM bus_terms_queue;
`,
  },
  {
    version: 11,
    description: "agents that lost a race take their turns in order (issue 25)",
    // A chatbus agent whose post was refused is owed a turn from its first refusal since it
    // last posted (`owed_since`, its place in line) while it keeps racing (`refused_at`).
    sql: `
CREATE TABLE IF NOT EXISTS bus_turns (
  topic_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  owed_since REAL NOT NULL,
  refused_at REAL NOT NULL,
  PRIMARY KEY (topic_id, agent_id)
) WITHOUT ROWID;
`,
  },
  {
    version: 12,
    description: "what changed besides messages, for AgentChatBus's event stream (issue 36)",
    // Edits, reactions and agents' comings and goings, each a row in commit order, so that
    // every process's event stream can tell its clients (msg.edit, msg.react, agent.online…)
    // by reading the rows after the last one it saw. Only the newest rows are kept.
    sql: `
CREATE TABLE IF NOT EXISTS bus_chat_events (
  position INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  ref TEXT NOT NULL,
  topic_id TEXT NULL,
  created_at REAL NOT NULL
);
`,
  },
  {
    version: 13,
    description: "session records of dead servers expire (issue 37)",
    // A server refreshes its record's `seen_at` while it runs; a record not refreshed for
    // the expiry is a server that is gone, on any host, and whoever sees it first removes it.
    // The table is rebuilt (SQLite has no ADD COLUMN IF NOT EXISTS) so that running this again
    // changes nothing; records of servers running now get the expiry from now.
    sql: `
CREATE TABLE IF NOT EXISTS bus_sessions_13 (
  session_id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  server_pid INTEGER NOT NULL,
  client_pid INTEGER NOT NULL,
  cwd TEXT NOT NULL,
  profile TEXT NOT NULL,
  agent TEXT NULL,
  started_at REAL NOT NULL,
  seen_at REAL NOT NULL
);
INSERT OR IGNORE INTO bus_sessions_13
  SELECT session_id, host, server_pid, client_pid, cwd, profile, agent, started_at,
         CAST(strftime('%s', 'now') AS REAL)
  FROM bus_sessions;
DROP TABLE bus_sessions;
ALTER TABLE bus_sessions_13 RENAME TO bus_sessions;
CREATE INDEX IF NOT EXISTS bus_sessions_host ON bus_sessions (host, client_pid);
`,
  },
];

/** The newest migration level this build knows. */
export const EXT_VERSION = EXT_MIGRATIONS.length;
