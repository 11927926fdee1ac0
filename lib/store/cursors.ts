/**
 * SQL for `cursors`: each peer's read position, and its presence
 * (`updated_at`, touched by every `sync` and `cursor_reset`).
 *
 * @module
 */

import { type Store, TOPIC_ROWS } from "./types.ts";

/** A row of `cursors`. */
export interface CursorRow {
  topic_id: string;
  agent_name: string;
  last_seq: number;
  updated_at: number;
}

/** Creates a peer's cursor at 0 if missing and touches its presence: (topic, agent, now). */
export const TOUCH_CURSOR_SQL =
  `INSERT INTO cursors (topic_id, agent_name, last_seq, updated_at) VALUES (?, ?, 0, ?)
   ON CONFLICT (topic_id, agent_name) DO UPDATE SET updated_at = excluded.updated_at`;
/** A peer's cursor: (topic, agent). */
export const GET_CURSOR_SQL = "SELECT * FROM cursors WHERE topic_id = ? AND agent_name = ?";

/** The cursor of a peer, if it has ever synced. */
export function getCursor(
  store: Store,
  { topicId, agentName }: { topicId: string; agentName: string },
): CursorRow | undefined {
  return store.stmt(GET_CURSOR_SQL).get<CursorRow>(topicId, agentName);
}

/** Set a peer's cursor (creating it if missing) and touch its presence. */
export function setCursor(
  store: Store,
  { topicId, agentName, lastSeq, now }: {
    topicId: string;
    agentName: string;
    lastSeq: number;
    now: number;
  },
): void {
  store.stmt(
    `INSERT INTO cursors (topic_id, agent_name, last_seq, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (topic_id, agent_name) DO UPDATE
       SET last_seq = excluded.last_seq, updated_at = excluded.updated_at`,
    TOPIC_ROWS,
  ).run(topicId, agentName, lastSeq, now);
}

/** True when any cursor exists under this name (a peer from before reservations). */
export function hasCursor(
  store: Store,
  { topicId, agentName }: { topicId: string; agentName: string },
): boolean {
  return getCursor(store, { topicId, agentName }) !== undefined;
}

/** Peers whose cursor was touched at or after `since`, most recent first. */
export function recentCursors(
  store: Store,
  { topicId, since, limit }: { topicId: string; since: number; limit: number },
): CursorRow[] {
  return store.stmt(
    `SELECT * FROM cursors WHERE topic_id = ? AND updated_at >= ?
     ORDER BY updated_at DESC, agent_name LIMIT ?`,
  ).all<CursorRow>(topicId, since, limit);
}

/** A present peer of any topic, and whether it is waiting in `sync` now. */
export interface PresenceRow extends CursorRow {
  waiting: 0 | 1;
  /** A chatbus agent said it is typing (`agent_set_typing`). */
  typing: 0 | 1;
}

/**
 * Cursors touched at or after `since` (most recent first), of one topic or
 * of every topic, each marked when a `sync` of that peer is waiting at `now`.
 */
export function presenceSince(
  store: Store,
  query: { since: number; now: number; limit: number; topicId?: string | undefined },
): PresenceRow[] {
  const select = `SELECT c.*, EXISTS (
       SELECT 1 FROM bus_waiters w
       WHERE w.topic_id = c.topic_id AND w.agent_name = c.agent_name AND w.until > ?1
     ) AS waiting, EXISTS (
       SELECT 1 FROM bus_typing t
       WHERE t.topic_id = c.topic_id AND t.agent_name = c.agent_name AND t.until > ?1
     ) AS typing
     FROM cursors c WHERE c.updated_at >= ?2`;
  const order = "ORDER BY c.updated_at DESC, c.agent_name LIMIT ?3";
  return query.topicId === undefined
    ? store.stmt(`${select} ${order}`).all<PresenceRow>(query.now, query.since, query.limit)
    : store.stmt(`${select} AND c.topic_id = ?4 ${order}`)
      .all<PresenceRow>(query.now, query.since, query.limit, query.topicId);
}

/** Record that a peer's `sync` waits on a topic until `until` (at the latest). */
export function markWaiting(
  store: Store,
  { topicId, agentName, until }: { topicId: string; agentName: string; until: number },
): void {
  store.stmt(
    `INSERT INTO bus_waiters (topic_id, agent_name, until) VALUES (?, ?, ?)
     ON CONFLICT (topic_id, agent_name) DO UPDATE SET until = excluded.until`,
    TOPIC_ROWS,
  ).run(topicId, agentName, until);
}

/** The peer's `sync` stopped waiting. */
export function clearWaiting(
  store: Store,
  { topicId, agentName }: { topicId: string; agentName: string },
): void {
  store.stmt("DELETE FROM bus_waiters WHERE topic_id = ? AND agent_name = ?", TOPIC_ROWS).run(
    topicId,
    agentName,
  );
}

/** The earliest end of a wait or of typing after `now`, if any (when presence changes by itself). */
export function nextWaitEnd(store: Store, now: number): number | undefined {
  const row = store.stmt(
    `SELECT MIN(t) AS t FROM (SELECT MIN(until) AS t FROM bus_waiters WHERE until > ?1
       UNION ALL SELECT MIN(until) FROM bus_typing WHERE until > ?1) AS ends`,
  ).get<{ t: number | null }>(now)!;
  return row.t ?? undefined;
}
