/**
 * SQL for the `topics` table (and the `topics_version` counter in `meta`).
 *
 * Plain functions over a {@linkcode Store}; callers wrap them in
 * `store.read()` or `store.immediate()`.
 *
 * @module
 */

import type { Store } from "./mod.ts";

/** A row of `topics`. */
export interface TopicRow {
  topic_id: string;
  name: string;
  created_at: number;
  status: "open" | "closed";
  closed_at: number | null;
  close_reason: string | null;
  metadata_json: string | null;
}

/** Which topics a listing includes. */
export type TopicStatusFilter = "open" | "closed" | "all";

/** Insert a new topic. */
export function insertTopic(store: Store, row: TopicRow): void {
  store.stmt(
    `INSERT INTO topics (topic_id, name, created_at, status, closed_at, close_reason, metadata_json)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.topic_id,
    row.name,
    row.created_at,
    row.status,
    row.closed_at,
    row.close_reason,
    row.metadata_json,
  );
}

/** The topic with this id. */
export function getTopic(store: Store, topicId: string): TopicRow | undefined {
  return store.stmt("SELECT * FROM topics WHERE topic_id = ?").get(topicId) as
    | TopicRow
    | undefined;
}

/** The newest topic with exactly this name and status. */
export function newestTopicByName(
  store: Store,
  { name, status }: { name: string; status: "open" | "closed" },
): TopicRow | undefined {
  return store.stmt(
    `SELECT * FROM topics WHERE name = ? AND status = ?
     ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  ).get(name, status) as TopicRow | undefined;
}

/** Topics, newest first. */
export function listTopics(
  store: Store,
  { status, limit }: { status: TopicStatusFilter; limit: number },
): TopicRow[] {
  if (status === "all") {
    return store.stmt("SELECT * FROM topics ORDER BY created_at DESC, rowid DESC LIMIT ?").all(
      limit,
    ) as unknown as TopicRow[];
  }
  return store.stmt(
    "SELECT * FROM topics WHERE status = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
  ).all(status, limit) as unknown as TopicRow[];
}

/** Mark an open topic closed; a closed one is left as it is. */
export function closeTopic(
  store: Store,
  { topicId, closedAt, reason }: { topicId: string; closedAt: number; reason: string | null },
): void {
  store.stmt(
    `UPDATE topics SET status = 'closed', closed_at = ?, close_reason = ?
     WHERE topic_id = ? AND status = 'open'`,
  ).run(closedAt, reason, topicId);
}

/**
 * Bump `meta.topics_version`, the change counter the original program's web
 * UI watches, so both programs' viewers refresh on our writes too.
 */
export function bumpTopicsVersion(store: Store): void {
  store.stmt(
    "UPDATE meta SET value = CAST(COALESCE(value, '0') AS INTEGER) + 1 WHERE key = 'topics_version'",
  ).run();
}

/** The current `meta.topics_version` (0 when absent). */
export function topicsVersion(store: Store): number {
  const row = store.stmt("SELECT value FROM meta WHERE key = 'topics_version'").get() as
    | { value: string | null }
    | undefined;
  return Number(row?.value ?? 0) || 0;
}

/** Activity of one topic, for the operator's listings. */
export interface TopicActivity {
  messages: number;
  last_seq: number;
  last_message_at: number | null;
  /** Agents whose cursor moved since the cut-off. */
  active_agents: number;
}

/** Message count, last seq and time, and recently active agents of a topic. */
export function topicActivity(
  store: Store,
  { topicId, activeSince }: { topicId: string; activeSince: number },
): TopicActivity {
  const counts = store.stmt(
    "SELECT COUNT(*) AS n, MAX(seq) AS s, MAX(created_at) AS t FROM messages WHERE topic_id = ?",
  ).get(topicId) as { n: number; s: number | null; t: number | null };
  const active = store.stmt(
    "SELECT COUNT(*) AS n FROM cursors WHERE topic_id = ? AND updated_at >= ?",
  ).get(topicId, activeSince) as { n: number };
  return {
    messages: counts.n,
    last_seq: counts.s ?? 0,
    last_message_at: counts.t,
    active_agents: active.n,
  };
}

/** Give a topic a new name (message bodies are never touched). */
export function renameTopic(
  store: Store,
  { topicId, name }: { topicId: string; name: string },
): void {
  store.stmt("UPDATE topics SET name = ? WHERE topic_id = ?").run(name, topicId);
}

/** Rows removed by {@linkcode deleteTopic}, per table. */
export interface DeletedRows {
  messages: number;
  cursors: number;
  reservations: number;
  questions: number;
}

/**
 * Delete a topic and everything in it: messages (their search rows and
 * vectors go with them, by trigger), cursors, name reservations, its seq
 * counter and its questions.
 */
export function deleteTopic(store: Store, topicId: string): DeletedRows {
  const count = (sql: string) => Number(store.stmt(sql).run(topicId).changes);
  const deleted = {
    messages: count("DELETE FROM messages WHERE topic_id = ?"),
    cursors: count("DELETE FROM cursors WHERE topic_id = ?"),
    reservations: count("DELETE FROM agent_name_reservations WHERE topic_id = ?"),
    questions: count("DELETE FROM questions WHERE topic_id = ?"),
  };
  count("DELETE FROM bus_waiters WHERE topic_id = ?");
  count("DELETE FROM topic_seq WHERE topic_id = ?");
  count("DELETE FROM topics WHERE topic_id = ?");
  return deleted;
}
