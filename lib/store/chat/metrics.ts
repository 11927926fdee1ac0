/**
 * SQL for what the AgentChatBus dialect's metrics count: threads by
 * status, messages (in windows, by stop reason), the mean gap between
 * messages, agents and those online.
 *
 * @module
 */

import type { Store } from "../types.ts";
import { KICKED_ACTIVITY } from "./agents.ts";
import { THREAD_STATUS } from "./threads.ts";

/** The stop reasons AgentChatBus counts in its metrics. */
export const COUNTED_STOP_REASONS = [
  "convergence",
  "timeout",
  "complete",
  "error",
  "impasse",
] as const;

/** What `GET /api/metrics` counts, read with one scan of the messages. */
export interface ChatCounts {
  threadsByStatus: Record<string, number>;
  messages: number;
  /** Messages created at or after each of `since` (in order). */
  messagesSince: number[];
  stopReasons: Record<string, number>;
  /** Mean gap between consecutive messages of the threads active since `activeSince`, seconds. */
  meanGap: number | null;
  agents: number;
  agentsOnline: number;
}

/** Count threads, messages and agents for the metrics (call inside a read). */
export function chatCounts(
  store: Store,
  { since, activeSince, onlineSince, now }: {
    since: number[];
    activeSince: number;
    onlineSince: number;
    now: number;
  },
): ChatCounts {
  const byStatus = store.stmt(
    `SELECT ${THREAD_STATUS} AS status, COUNT(*) AS n
     FROM topics t LEFT JOIN bus_threads b ON b.topic_id = t.topic_id GROUP BY 1`,
  ).all<{ status: string; n: number }>();
  const windows = since.map((_, i) => `SUM(CASE WHEN created_at >= ? THEN 1 ELSE 0 END) AS s${i}`);
  // Our metadata is compact JSON, so a stop reason reads as this exact text.
  const reasons = COUNTED_STOP_REASONS.map((reason, i) =>
    `SUM(CASE WHEN metadata_json LIKE '%"stop_reason":"${reason}"%' THEN 1 ELSE 0 END) AS r${i}`
  );
  const totals = store.stmt(
    `SELECT COUNT(*) AS n, ${[...windows, ...reasons].join(", ")} FROM messages`,
  ).get<Record<string, number | null>>(...since)!;
  const gap = store.stmt(
    `SELECT AVG(gap) AS gap FROM (
       SELECT created_at - LAG(created_at) OVER (PARTITION BY topic_id ORDER BY seq) AS gap
       FROM messages
       WHERE topic_id IN (SELECT DISTINCT topic_id FROM messages WHERE created_at >= ?)
     ) gaps WHERE gap IS NOT NULL`,
  ).get<{ gap: number | null }>(activeSince)!;
  // Online as `agentInfo` says: not kicked, and heard from lately or waiting in msg_wait now.
  const agents = store.stmt(
    `SELECT COUNT(*) AS n,
       SUM(CASE WHEN last_activity <> ?1 AND (last_heartbeat >= ?2 OR last_activity_time >= ?2
         OR agent_id IN (SELECT agent_id FROM bus_chat_waits WHERE until > ?3)) THEN 1 ELSE 0 END)
         AS online
     FROM bus_agents`,
  ).get<{ n: number; online: number | null }>(KICKED_ACTIVITY, onlineSince, now)!;
  return {
    threadsByStatus: Object.fromEntries(byStatus.map((row) => [row.status, Number(row.n)])),
    messages: Number(totals.n),
    messagesSince: since.map((_, i) => Number(totals[`s${i}`] ?? 0)),
    stopReasons: Object.fromEntries(
      COUNTED_STOP_REASONS.map((reason, i) => [reason, Number(totals[`r${i}`] ?? 0)]),
    ),
    meanGap: gap.gap === null ? null : Number(gap.gap),
    agents: Number(agents.n),
    agentsOnline: Number(agents.online ?? 0),
  };
}
