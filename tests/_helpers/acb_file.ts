/**
 * AgentChatBus database files for the import's tests: its tables as its TS
 * server creates them (read for this), and a small conversation in them.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";

/** AgentChatBus's tables that the import reads (as its TS server creates them). */
export const SCHEMA = `
CREATE TABLE threads (id TEXT PRIMARY KEY, topic TEXT NOT NULL, status TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, closed_at TEXT, summary TEXT,
  system_prompt TEXT, template_id TEXT, metadata TEXT);
CREATE TABLE messages (id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, seq INTEGER NOT NULL,
  priority TEXT NOT NULL, author TEXT NOT NULL, author_id TEXT, author_name TEXT,
  author_emoji TEXT, role TEXT NOT NULL, content TEXT NOT NULL, metadata TEXT,
  reply_to_msg_id TEXT, created_at TEXT NOT NULL, edited_at TEXT, edit_version INTEGER);
CREATE TABLE agents (id TEXT PRIMARY KEY, name TEXT NOT NULL, display_name TEXT,
  alias_source TEXT, ide TEXT, model TEXT, description TEXT, is_online INTEGER NOT NULL,
  last_heartbeat TEXT NOT NULL, last_activity TEXT, last_activity_time TEXT, capabilities TEXT,
  skills TEXT, token TEXT NOT NULL, emoji TEXT);
CREATE TABLE thread_settings (thread_id TEXT PRIMARY KEY,
  auto_administrator_enabled INTEGER NOT NULL, timeout_seconds INTEGER NOT NULL,
  switch_timeout_seconds INTEGER NOT NULL, last_activity_time TEXT NOT NULL,
  auto_assigned_admin_id TEXT, auto_assigned_admin_name TEXT, admin_assignment_time TEXT,
  creator_admin_id TEXT, creator_admin_name TEXT, creator_assignment_time TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE message_edits (message_id TEXT NOT NULL, version INTEGER NOT NULL,
  old_content TEXT NOT NULL, edited_by TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE reactions (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, agent_id TEXT,
  agent_name TEXT, reaction TEXT NOT NULL, created_at TEXT NOT NULL,
  UNIQUE (message_id, agent_id, reaction));
CREATE TABLE templates (id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT,
  system_prompt TEXT, default_metadata TEXT, is_builtin INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL);
`;

export const ALICE = "0b7f2d2e-1111-4c8e-9d11-000000000001";
export const BOB = "0b7f2d2e-2222-4c8e-9d11-000000000002";
export const DESIGN = "5d1c9a40-aaaa-4f00-8000-000000000001";
export const RELEASE = "5d1c9a40-bbbb-4f00-8000-000000000002";

/** A file at `path` with two agents, a custom template, two threads and four messages. */
export function writeFixture(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(SCHEMA);
  const t = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, "0")}:00.000Z`;
  const agent = db.prepare(
    `INSERT INTO agents (id, name, display_name, ide, model, description, is_online,
       last_heartbeat, capabilities, skills, token, emoji) VALUES (?, ?, ?, ?, ?, '', 1, ?, ?, '[]', ?, ?)`,
  );
  agent.run(
    ALICE,
    "Cursor (claude)",
    "Alice",
    "Cursor",
    "claude",
    t(0),
    '["review"]',
    "alice-token",
    "🦊",
  );
  agent.run(BOB, "Codex (gpt)", null, "Codex", "gpt", t(0), "[]", "bob-token", "🐻");
  const thread = db.prepare(
    `INSERT INTO threads (id, topic, status, created_at, updated_at, closed_at, summary,
       system_prompt, template_id, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  thread.run(
    DESIGN,
    "API design",
    "review",
    t(1),
    t(5),
    null,
    null,
    "Talk API only.",
    "custom-rfc",
    '{"ticket":"API-7"}',
  );
  thread.run(
    RELEASE,
    "Release 2.0",
    "closed",
    t(2),
    t(9),
    t(9),
    "Shipped on Friday",
    null,
    null,
    null,
  );
  db.prepare(
    `INSERT INTO thread_settings (thread_id, auto_administrator_enabled, timeout_seconds,
       switch_timeout_seconds, last_activity_time, creator_admin_id, creator_admin_name,
       created_at, updated_at) VALUES (?, 1, 60, 60, ?, ?, 'Alice', ?, ?)`,
  ).run(DESIGN, t(1), ALICE, t(1), t(1));
  const message = db.prepare(
    `INSERT INTO messages (id, thread_id, seq, priority, author, author_id, role, content,
       metadata, reply_to_msg_id, created_at, edited_at, edit_version)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // AgentChatBus numbers messages across the bus: the two threads interleave.
  message.run(
    "m1",
    DESIGN,
    1,
    "normal",
    ALICE,
    ALICE,
    "user",
    "Should pagination use cursors?",
    null,
    null,
    t(3),
    t(4),
    1,
  );
  message.run(
    "m2",
    RELEASE,
    2,
    "urgent",
    "human",
    null,
    "user",
    "Freeze the branch",
    null,
    null,
    t(3),
    null,
    0,
  );
  message.run(
    "m3",
    DESIGN,
    3,
    "normal",
    BOB,
    BOB,
    "assistant",
    "Yes: opaque cursors",
    '{"stop_reason":"convergence"}',
    "m1",
    t(5),
    null,
    0,
  );
  message.run(
    "m4",
    RELEASE,
    4,
    "normal",
    BOB,
    BOB,
    "assistant",
    "Frozen",
    null,
    null,
    t(6),
    null,
    0,
  );
  db.prepare(
    `INSERT INTO message_edits (message_id, version, old_content, edited_by, created_at)
     VALUES ('m1', 1, 'Should pagination use offsets?', ?, ?)`,
  ).run(ALICE, t(4));
  db.prepare(
    `INSERT INTO reactions (id, message_id, agent_id, agent_name, reaction, created_at)
     VALUES ('r1', 'm3', ?, 'Alice', 'agree', ?)`,
  ).run(ALICE, t(6));
  db.prepare(
    `INSERT INTO templates (id, name, description, system_prompt, is_builtin, created_at)
     VALUES ('custom-rfc', 'RFC', 'Design RFC', 'Write an RFC.', 0, ?),
            ('code-review', 'Code Review', 'builtin', 'x', 1, ?)`,
  ).run(t(0), t(0));
  db.close();
}
