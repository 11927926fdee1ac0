/**
 * SQL for the wait states of the AgentChatBus dialect (`bus_chat_waits`:
 * agents blocked in `msg_wait`; `bus_typing`), keyed by topic, and what
 * `msg_wait` reads before it decides to wait.
 *
 * @module
 */

import { type Store, TOPIC_ROWS } from "../types.ts";
import { LATEST_SEQ_SQL } from "../messages.ts";
import { GET_TOPIC_SQL, type TopicRow } from "../topics.ts";

/** What `msg_wait` decides on, read at once (one round trip on PostgreSQL). */
export interface WaitStart {
  /** The thread's topic, if it exists. */
  topic: TopicRow | undefined;
  latest: number;
  /** Whether the agent holds an unused token in the thread. */
  holdsToken: boolean;
  /** The reason of its pending refresh request (a refused post it has not re-read after). */
  refresh: string | undefined;
}

/** {@linkcode WaitStart} for `agentId` (none: an anonymous wait) in `topicId`. */
export function readWaitStart(
  store: Store,
  { topicId, agentId }: { topicId: string; agentId: string | undefined },
): WaitStart {
  const [topic, latest, token, refresh] = store.gather([
    { sql: GET_TOPIC_SQL, params: [topicId] },
    { sql: LATEST_SEQ_SQL, params: [topicId] },
    ...(agentId === undefined ? [] : [
      {
        sql: `SELECT 1 FROM bus_reply_tokens
              WHERE topic_id = ? AND agent_id = ? AND consumed_at IS NULL LIMIT 1`,
        params: [topicId, agentId],
      },
      {
        sql: `SELECT reason FROM bus_refresh_requests
              WHERE topic_id = ? AND agent_id = ? AND reason <> 'served'`,
        params: [topicId, agentId],
      },
    ]),
  ]);
  return {
    topic: topic![0] as TopicRow | undefined,
    latest: Number(latest![0]!.latest),
    holdsToken: (token?.length ?? 0) > 0,
    refresh: refresh?.[0]?.reason as string | undefined,
  };
}

/** A row of `bus_chat_waits`: an agent blocked in `msg_wait`. */
export interface ChatWaitRow {
  topic_id: string;
  agent_id: string;
  entered_at: number;
  timeout_ms: number;
  until: number;
}

/** Record that an agent waits in a thread until `until` at the latest. */
export function enterChatWait(store: Store, row: ChatWaitRow): void {
  store.stmt(
    `INSERT OR REPLACE INTO bus_chat_waits (topic_id, agent_id, entered_at, timeout_ms, until)
     VALUES (?, ?, ?, ?, ?)`,
    TOPIC_ROWS,
  ).run(row.topic_id, row.agent_id, row.entered_at, row.timeout_ms, row.until);
}

/** The agent stopped waiting in a thread. */
export function exitChatWait(
  store: Store,
  { topicId, agentId }: { topicId: string; agentId: string },
): void {
  store.stmt("DELETE FROM bus_chat_waits WHERE topic_id = ? AND agent_id = ?", TOPIC_ROWS).run(
    topicId,
    agentId,
  );
}

/** The threads an agent has a wait state in (expired ones too). */
export function agentWaitTopics(store: Store, agentId: string): string[] {
  return (store.stmt("SELECT topic_id FROM bus_chat_waits WHERE agent_id = ? ORDER BY topic_id")
    .all<{ topic_id: string }>(agentId)).map((row) => row.topic_id);
}

/** The agent stopped waiting everywhere. */
export function exitAgentWaits(store: Store, agentId: string): void {
  store.stmt("DELETE FROM bus_chat_waits WHERE agent_id = ?").run(agentId);
}

/** Drop waits whose deadline passed (left by a process that died). */
export function pruneChatWaits(
  store: Store,
  { topicId, now }: { topicId: string; now: number },
): void {
  store.stmt("DELETE FROM bus_chat_waits WHERE topic_id = ? AND until <= ?", TOPIC_ROWS)
    .run(topicId, now);
}

/** The agents waiting in a thread now. */
export function chatWaits(
  store: Store,
  { topicId, now }: { topicId: string; now: number },
): ChatWaitRow[] {
  return store.stmt(
    "SELECT * FROM bus_chat_waits WHERE topic_id = ? AND until > ? ORDER BY entered_at, agent_id",
  ).all<ChatWaitRow>(topicId, now);
}

/** The agents waiting in any thread now (waiting counts as being online). */
export function waitingAgentIds(store: Store, now: number): string[] {
  return (store.stmt("SELECT DISTINCT agent_id FROM bus_chat_waits WHERE until > ?").all<{
    agent_id: string;
  }>(now)).map((row) => row.agent_id);
}

/** Show an agent as typing in a thread until `until` (a post or `is_typing=false` ends it sooner). */
export function setTyping(
  store: Store,
  { topicId, agentName, until }: { topicId: string; agentName: string; until: number },
): void {
  store.stmt(
    "INSERT OR REPLACE INTO bus_typing (topic_id, agent_name, until) VALUES (?, ?, ?)",
    TOPIC_ROWS,
  ).run(topicId, agentName, until);
}

/** The agent stopped typing in a thread. */
export function clearTyping(
  store: Store,
  { topicId, agentName }: { topicId: string; agentName: string },
): void {
  store.stmt("DELETE FROM bus_typing WHERE topic_id = ? AND agent_name = ?", TOPIC_ROWS).run(
    topicId,
    agentName,
  );
}
