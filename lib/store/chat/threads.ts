/**
 * SQL for the threads of the AgentChatBus dialect (seed 002): what it adds
 * to a topic (`bus_threads`: its thread state, summary, template, prompt),
 * read with the topic as one thread view, and what a thread keeps besides
 * its messages, removed with it.
 *
 * @module
 */

import { type Store, TOPIC_ROWS } from "../types.ts";

/** A row of `bus_threads`: what a thread adds to its topic. */
export interface ThreadRow {
  topic_id: string;
  state: string;
  summary: string | null;
  system_prompt: string | null;
  template_id: string | null;
  creator_admin_id: string | null;
  creator_admin_name: string | null;
  updated_at: number;
}

/** A topic seen as a thread: the topic row joined with its thread row, if any. */
export interface ThreadView {
  topic_id: string;
  name: string;
  created_at: number;
  topic_status: "open" | "closed";
  closed_at: number | null;
  metadata_json: string | null;
  /** `closed` when the topic is closed, else the thread's state. */
  status: string;
  state: string | null;
  summary: string | null;
  system_prompt: string | null;
  template_id: string | null;
  creator_admin_id: string | null;
  creator_admin_name: string | null;
  /** The later of its last state change and its newest message. */
  updated_at: number;
  /** Its topic's insertion order: breaks ties between threads created in the same millisecond. */
  position: number;
}

/** The status a thread shows: `closed` when its topic is, else its state (`discuss` by default). */
export const THREAD_STATUS =
  `CASE WHEN t.status = 'closed' THEN 'closed' ELSE COALESCE(b.state, 'discuss') END`;

/** When a thread last changed: its state, or its newest message (from any dialect). */
const THREAD_UPDATED = `MAX(COALESCE(b.updated_at, t.created_at), COALESCE(
  (SELECT m.created_at FROM messages m WHERE m.topic_id = t.topic_id ORDER BY m.seq DESC LIMIT 1),
  0))`;

const THREAD_SELECT = `SELECT t.topic_id, t.name, t.created_at, t.status AS topic_status,
  t.closed_at, t.metadata_json, b.state, b.summary, b.system_prompt, b.template_id,
  b.creator_admin_id, b.creator_admin_name, ${THREAD_UPDATED} AS updated_at,
  ${THREAD_STATUS} AS status, t.rowid AS position
  FROM topics t LEFT JOIN bus_threads b ON b.topic_id = t.topic_id`;

/** The thread of a topic. */
export function getThread(store: Store, topicId: string): ThreadView | undefined {
  return store.stmt(`${THREAD_SELECT} WHERE t.topic_id = ?`).get(topicId) as
    | ThreadView
    | undefined;
}

/** The thread to join by name: the newest open topic of that name, else the newest of any status. */
export function threadByName(store: Store, name: string): ThreadView | undefined {
  return store.stmt(
    `${THREAD_SELECT} WHERE t.name = ?
     ORDER BY t.status = 'open' DESC, t.created_at DESC, t.rowid DESC LIMIT 1`,
  ).get<ThreadView>(name);
}

/** Query of {@linkcode listThreads}. */
export interface ThreadListQuery {
  /** Only this status; undefined for every status but `archived` (unless `includeArchived`). */
  status: string | undefined;
  includeArchived: boolean;
  /**
   * Only threads listed after this one: created before `at`, or at `at` and
   * inserted before `position` (every thread created at `at` when it is absent).
   */
  before: { at: number; position?: number | undefined } | undefined;
  limit: number;
}

/** Threads newest first. */
export function listThreads(store: Store, query: ThreadListQuery): ThreadView[] {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (query.status !== undefined) {
    where.push(`${THREAD_STATUS} = ?`);
    params.push(query.status);
  } else if (!query.includeArchived) {
    where.push(`${THREAD_STATUS} <> 'archived'`);
  }
  const before = query.before;
  if (before?.position !== undefined) {
    where.push("(t.created_at < ? OR (t.created_at = ? AND t.rowid < ?))");
    params.push(before.at, before.at, before.position);
  } else if (before !== undefined) {
    where.push("t.created_at < ?");
    params.push(before.at);
  }
  return store.stmt(
    `${THREAD_SELECT} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ORDER BY t.created_at DESC, t.rowid DESC LIMIT ?`,
  ).all<ThreadView>(...params, query.limit);
}

/** How many threads {@linkcode listThreads} would find without a limit or cursor. */
export function countThreads(
  store: Store,
  query: Pick<ThreadListQuery, "status" | "includeArchived">,
): number {
  const base =
    "SELECT COUNT(*) AS n FROM topics t LEFT JOIN bus_threads b ON b.topic_id = t.topic_id";
  const row = query.status !== undefined
    ? store.stmt(`${base} WHERE ${THREAD_STATUS} = ?`).get(query.status)
    : query.includeArchived
    ? store.stmt(base).get()
    : store.stmt(`${base} WHERE ${THREAD_STATUS} <> 'archived'`).get();
  return (row as { n: number }).n;
}

/** Create or replace a topic's thread row. */
export function putThread(store: Store, row: ThreadRow): void {
  store.stmt(
    `INSERT OR REPLACE INTO bus_threads (topic_id, state, summary, system_prompt, template_id,
       creator_admin_id, creator_admin_name, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.topic_id,
    row.state,
    row.summary,
    row.system_prompt,
    row.template_id,
    row.creator_admin_id,
    row.creator_admin_name,
    row.updated_at,
  );
}

/** Set a thread's state (creating its row for a topic made by another dialect). */
export function setThreadState(
  store: Store,
  { topicId, state, summary, now }: {
    topicId: string;
    state: string;
    /** Replace the summary (undefined keeps it). */
    summary?: string | null | undefined;
    now: number;
  },
): void {
  store.stmt(
    `INSERT INTO bus_threads (topic_id, state, summary, updated_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (topic_id) DO UPDATE SET state = ?2, updated_at = ?4,
       summary = CASE WHEN ?5 <> 0 THEN ?3 ELSE bus_threads.summary END`,
  ).run(topicId, state, summary ?? null, now, summary === undefined ? 0 : 1);
}

/** Reopen a closed topic (the chat dialect lets any state follow any other). */
export function reopenTopic(store: Store, topicId: string): void {
  store.stmt(
    "UPDATE topics SET status = 'open', closed_at = NULL, close_reason = NULL WHERE topic_id = ?",
  ).run(topicId);
}

/** Remove what the dialect keeps per thread (its messages' extras go with the messages). */
export function deleteThreadRows(store: Store, topicId: string): void {
  store.stmt("DELETE FROM bus_threads WHERE topic_id = ?").run(topicId);
  for (
    const table of [
      "bus_reply_tokens",
      "bus_refresh_requests",
      "bus_turns",
      "bus_chat_waits",
      "bus_typing",
    ]
  ) {
    store.stmt(`DELETE FROM ${table} WHERE topic_id = ?`, TOPIC_ROWS).run(topicId);
  }
}
