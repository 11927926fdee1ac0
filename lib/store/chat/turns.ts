/**
 * SQL for fair turns and refresh requests of the AgentChatBus dialect
 * (`bus_turns`, `bus_refresh_requests`, keyed by topic): who lost a race
 * and is owed a turn, and who must re-read before its next post.
 *
 * @module
 */

import { type Query, type Store, TOPIC_ROWS } from "../types.ts";

/** A thread's latest seq, and whether a post by some agent should wait its turn. */
export interface TurnState {
  seq: number;
  /**
   * Another agent that lost a race is owed a turn before the poster (from
   * before the poster's own first refusal, if it has one) and still races:
   * it was refused since the latest message or since `racingSince`.
   */
  contested: boolean;
}

/**
 * {@linkcode TurnState} of a thread for a post by `agentId`; undefined when
 * the thread has no message yet. Agents that lost races take their turns in
 * the order of their first refusal since they last posted.
 */
export function turnState(store: Store, question: TurnQuestion): TurnState | undefined {
  const { sql, params } = turnStateQuery(question);
  return toTurnState(store.stmt(sql).get(...params));
}

/** What {@linkcode turnState} is asked. */
export interface TurnQuestion {
  topicId: string;
  agentId: string;
  racingSince: number;
  /** Only agents owed a turn since before this are waited for (they lost more than one race). */
  owedBefore: number;
}

/** The statement of {@linkcode turnState}, to travel with others ({@linkcode Store.gather}). */
export function turnStateQuery(
  { topicId, agentId, racingSince, owedBefore }: TurnQuestion,
): Query {
  return {
    sql: `SELECT m.seq, EXISTS (
            SELECT 1 FROM bus_turns AS q
            WHERE q.topic_id = m.topic_id AND q.agent_id <> ?2
              AND q.refused_at >= MIN(m.created_at, ?3)
              AND q.owed_since <= ?4
              AND q.owed_since < COALESCE(
                (SELECT p.owed_since FROM bus_turns AS p
                 WHERE p.topic_id = m.topic_id AND p.agent_id = ?2), 1e300)
          ) AS contested
          FROM messages AS m WHERE m.topic_id = ?1 ORDER BY m.seq DESC LIMIT 1`,
    params: [topicId, agentId, racingSince, owedBefore],
  };
}

/** The {@linkcode TurnState} in a row of {@linkcode turnStateQuery}. */
export function toTurnState(row: Record<string, unknown> | undefined): TurnState | undefined {
  return row && { seq: Number(row.seq), contested: Boolean(row.contested) };
}

/** Ask an agent to re-read before its next post (after a sync error). */
export function setRefreshRequest(
  store: Store,
  { topicId, agentId, reason, now }: {
    topicId: string;
    agentId: string;
    reason: string;
    now: number;
  },
): void {
  store.stmt(
    `INSERT OR REPLACE INTO bus_refresh_requests (topic_id, agent_id, reason, created_at)
     VALUES (?, ?, ?, ?)`,
    TOPIC_ROWS,
  ).run(topicId, agentId, reason, now);
}

/** The agent re-read after a refused post: its refresh request is served. */
export function clearRefreshRequest(
  store: Store,
  { topicId, agentId }: { topicId: string; agentId: string },
): void {
  store.stmt(
    "DELETE FROM bus_refresh_requests WHERE topic_id = ? AND agent_id = ?",
    TOPIC_ROWS,
  ).run(
    topicId,
    agentId,
  );
}

/**
 * The agent lost a race (a post of its was refused): it is owed a turn from
 * its first refusal since it last posted on, and is still racing as of `now`.
 */
export function recordLostRace(
  store: Store,
  { topicId, agentId, now }: { topicId: string; agentId: string; now: number },
): void {
  store.stmt(
    `INSERT INTO bus_turns (topic_id, agent_id, owed_since, refused_at) VALUES (?1, ?2, ?3, ?3)
     ON CONFLICT (topic_id, agent_id) DO UPDATE SET refused_at = excluded.refused_at`,
    TOPIC_ROWS,
  ).run(topicId, agentId, now);
}

/** The agent posted: it is owed nothing any more. */
export function dropRefreshRequest(
  store: Store,
  { topicId, agentId }: { topicId: string; agentId: string },
): void {
  for (const table of ["bus_refresh_requests", "bus_turns"]) {
    store.stmt(`DELETE FROM ${table} WHERE topic_id = ? AND agent_id = ?`, TOPIC_ROWS)
      .run(topicId, agentId);
  }
}
