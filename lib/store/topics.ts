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
  name: string,
  status: "open" | "closed",
): TopicRow | undefined {
  return store.stmt(
    `SELECT * FROM topics WHERE name = ? AND status = ?
     ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  ).get(name, status) as TopicRow | undefined;
}

/** Topics, newest first. */
export function listTopics(store: Store, status: TopicStatusFilter, limit: number): TopicRow[] {
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
  topicId: string,
  closedAt: number,
  reason: string | null,
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
