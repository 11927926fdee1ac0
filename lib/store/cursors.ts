/**
 * SQL for `cursors`: each peer's read position, and its presence
 * (`updated_at`, touched by every `sync` and `cursor_reset`).
 *
 * @module
 */

import type { Store } from "./mod.ts";

/** A row of `cursors`. */
export interface CursorRow {
  topic_id: string;
  agent_name: string;
  last_seq: number;
  updated_at: number;
}

/** The cursor of a peer, creating it at 0 if missing, and touching its presence. */
export function touchCursor(
  store: Store,
  topicId: string,
  agentName: string,
  now: number,
): CursorRow {
  store.stmt(
    `INSERT INTO cursors (topic_id, agent_name, last_seq, updated_at) VALUES (?, ?, 0, ?)
     ON CONFLICT (topic_id, agent_name) DO UPDATE SET updated_at = excluded.updated_at`,
  ).run(topicId, agentName, now);
  return getCursor(store, topicId, agentName)!;
}

/** The cursor of a peer, if it has ever synced. */
export function getCursor(store: Store, topicId: string, agentName: string): CursorRow | undefined {
  return store.stmt("SELECT * FROM cursors WHERE topic_id = ? AND agent_name = ?").get(
    topicId,
    agentName,
  ) as CursorRow | undefined;
}

/** Set a peer's cursor (creating it if missing) and touch its presence. */
export function setCursor(
  store: Store,
  topicId: string,
  agentName: string,
  lastSeq: number,
  now: number,
): void {
  store.stmt(
    `INSERT INTO cursors (topic_id, agent_name, last_seq, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (topic_id, agent_name) DO UPDATE
       SET last_seq = excluded.last_seq, updated_at = excluded.updated_at`,
  ).run(topicId, agentName, lastSeq, now);
}

/** True when any cursor exists under this name (a peer from before reservations). */
export function hasCursor(store: Store, topicId: string, agentName: string): boolean {
  return getCursor(store, topicId, agentName) !== undefined;
}

/** Peers whose cursor was touched at or after `since`, most recent first. */
export function recentCursors(
  store: Store,
  topicId: string,
  since: number,
  limit: number,
): CursorRow[] {
  return store.stmt(
    `SELECT * FROM cursors WHERE topic_id = ? AND updated_at >= ?
     ORDER BY updated_at DESC, agent_name LIMIT ?`,
  ).all(topicId, since, limit) as unknown as CursorRow[];
}
