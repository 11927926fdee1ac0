/**
 * SQL for `bus_chat_events`: the journal of what changes in the AgentChatBus
 * dialect besides messages (an edit, a reaction given or taken back, an
 * agent registering, changing or leaving), one row per change in commit
 * order, so that every process's event stream can tell its clients by
 * reading the rows after the last one it saw (as message positions are
 * read). A row is written in the transaction of the change it records;
 * positions follow commit order (SQLite has one writer; on PostgreSQL the
 * row is written under the commit lock). Only the newest
 * {@linkcode KEPT_CHAT_EVENTS} rows are kept: a stream that falls further
 * behind is told to reload.
 *
 * @module
 */

import type { Store } from "../types.ts";

/** Rows kept; older ones are deleted as new ones are written. */
export const KEPT_CHAT_EVENTS = 1000;

/** One journal row. */
export interface ChatEventRow {
  position: number;
  kind: string;
  /** The message or agent it concerns. */
  ref: string;
  topic_id: string | null;
}

/** Record one change (inside its write transaction), and let the oldest rows go. */
export function recordChatEvent(
  store: Store,
  { kind, ref, topicId, now }: { kind: string; ref: string; topicId: string | null; now: number },
): void {
  store.stmt(
    `INSERT INTO bus_chat_events (position, kind, ref, topic_id, created_at)
     VALUES ((SELECT COALESCE(MAX(position), 0) + 1 FROM bus_chat_events), ?, ?, ?, ?)`,
  ).run(kind, ref, topicId, now);
  store.stmt(
    `DELETE FROM bus_chat_events
     WHERE position <= (SELECT MAX(position) FROM bus_chat_events) - ?`,
  ).run(KEPT_CHAT_EVENTS);
}

/** The rows after `position`, oldest first, at most `limit`. */
export function chatEventsAfter(store: Store, position: number, limit: number): ChatEventRow[] {
  return store.stmt(
    `SELECT position, kind, ref, topic_id FROM bus_chat_events
     WHERE position > ? ORDER BY position LIMIT ?`,
  ).all<ChatEventRow>(position, limit);
}

/** The newest row's position (0 when there is none). */
export function latestChatEvent(store: Store): number {
  const sql = "SELECT COALESCE(MAX(position), 0) AS position FROM bus_chat_events";
  return Number(store.stmt(sql).get<{ position: number }>()!.position);
}
