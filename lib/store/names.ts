/**
 * SQL for `agent_name_reservations`: who owns which name in a topic.
 *
 * Tokens are stored as the seed stores them (plain text) so that the
 * original program, sharing the file, can check tokens we hand out and the
 * other way round.
 *
 * @module
 */

import type { Store } from "./types.ts";

/** A row of `agent_name_reservations`. */
export interface ReservationRow {
  topic_id: string;
  agent_name: string;
  reclaim_token: string;
  created_at: number;
  last_claimed_at: number;
}

/** The reservation of a name in a topic. */
export function getReservation(
  store: Store,
  { topicId, agentName }: { topicId: string; agentName: string },
): ReservationRow | undefined {
  return store.stmt(
    "SELECT * FROM agent_name_reservations WHERE topic_id = ? AND agent_name = ?",
  ).get<ReservationRow>(topicId, agentName);
}

/** Reserve a name. */
export function insertReservation(store: Store, row: ReservationRow): void {
  store.stmt(
    `INSERT INTO agent_name_reservations (topic_id, agent_name, reclaim_token, created_at, last_claimed_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(row.topic_id, row.agent_name, row.reclaim_token, row.created_at, row.last_claimed_at);
}

/** Record a reclaim. */
export function touchReservation(
  store: Store,
  { topicId, agentName, now }: { topicId: string; agentName: string; now: number },
): void {
  store.stmt(
    "UPDATE agent_name_reservations SET last_claimed_at = ? WHERE topic_id = ? AND agent_name = ?",
  ).run(now, topicId, agentName);
}

/** Every reserved name of a topic (to keep suggestions free). */
export function reservedNames(store: Store, topicId: string): Set<string> {
  const rows = store.stmt("SELECT agent_name FROM agent_name_reservations WHERE topic_id = ?")
    .all<{ agent_name: string }>(topicId);
  return new Set(rows.map((row) => row.agent_name));
}
