/**
 * SQL for the `topics` table (and the `topics_version` counter in `meta`).
 *
 * Plain functions over a {@linkcode Store}; callers wrap them in
 * `store.read()` or `store.immediate()`.
 *
 * @module
 */

import { type DeclaredScope, type Store, TOPIC_ROWS } from "./types.ts";

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
  return store.stmt(GET_TOPIC_SQL).get<TopicRow>(topicId);
}

/** A topic by id: (topic_id). */
export const GET_TOPIC_SQL = "SELECT * FROM topics WHERE topic_id = ?";

/** The newest topic with exactly this name and status. */
export function newestTopicByName(
  store: Store,
  { name, status }: { name: string; status: "open" | "closed" },
): TopicRow | undefined {
  return store.stmt(
    `SELECT * FROM topics WHERE name = ? AND status = ?
     ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  ).get<TopicRow>(name, status);
}

/** A topic with its place in the list's order (its rowid). */
export type ListedTopicRow = TopicRow & { position: number };

/** Topics, newest first; with `before`, those after that place in the order. */
export function listTopics(
  store: Store,
  { status, limit, before }: {
    status: TopicStatusFilter;
    limit: number;
    before?: { at: number; position: number } | undefined;
  },
): ListedTopicRow[] {
  if (before === undefined) {
    return store.stmt(
      `SELECT *, rowid AS position FROM topics WHERE (?1 = 'all' OR status = ?1)
       ORDER BY created_at DESC, rowid DESC LIMIT ?2`,
    ).all<ListedTopicRow>(status, limit);
  }
  return store.stmt(
    `SELECT *, rowid AS position FROM topics WHERE (?1 = 'all' OR status = ?1)
       AND (created_at < ?2 OR (created_at = ?2 AND rowid < ?3))
     ORDER BY created_at DESC, rowid DESC LIMIT ?4`,
  ).all<ListedTopicRow>(status, before.at, before.position, limit);
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
  /** The chatbus thread state, when the dialect set one (else null: `discuss`). */
  thread_state: string | null;
}

/** Message count, last seq and time, and recently active agents of a topic. */
export function topicActivity(
  store: Store,
  { topicId, activeSince }: { topicId: string; activeSince: number },
): TopicActivity {
  return store.stmt(`SELECT ${activityColumns("?1", "?2")}`).get<TopicActivity>(
    topicId,
    activeSince,
  )!;
}

/** How {@linkcode topicSummaryRows} orders: latest activity, newest, or by name. */
export type TopicSort = "activity" | "created" | "name";

/** Which topics {@linkcode topicSummaryRows} returns. */
export interface SummaryQuery {
  status: TopicStatusFilter;
  /** Only names containing this (ASCII case-insensitive). */
  nameContains?: string | undefined;
  sort: TopicSort;
  limit: number;
  /** Agents whose cursor moved since then count as active. */
  activeSince: number;
}

/**
 * Topics with their activity, filtered, sorted and cut in one query. The
 * sort keys are read from indexes (the newest message per topic), and the
 * counts are computed only for the rows returned.
 */
export function topicSummaryRows(
  store: Store,
  query: SummaryQuery,
): (TopicRow & TopicActivity)[] {
  return store.stmt(
    `SELECT t.*, ${activityColumns("t.topic_id", "?1")} FROM (
       SELECT * FROM (
         SELECT *, (SELECT created_at FROM messages m WHERE m.topic_id = topics.topic_id
                    ORDER BY seq DESC LIMIT 1) AS newest
         FROM topics
         WHERE (?2 = 'all' OR status = ?2)
           AND (CAST(?3 AS TEXT) IS NULL OR instr(lower(name), lower(CAST(?3 AS TEXT))) > 0)
       ) AS f ORDER BY ${SORT_SQL[query.sort]} LIMIT ?4
     ) AS t ORDER BY ${SORT_SQL[query.sort]}`,
  ).all<TopicRow & TopicActivity>(
    query.activeSince,
    query.status,
    query.nameContains ?? null,
    query.limit,
  );
}

/** How many topics a {@linkcode SummaryQuery} matches without its limit. */
export function countTopics(
  store: Store,
  query: Pick<SummaryQuery, "status" | "nameContains">,
): number {
  return store.stmt(
    `SELECT COUNT(*) AS n FROM topics
     WHERE (?1 = 'all' OR status = ?1) AND (CAST(?2 AS TEXT) IS NULL OR instr(lower(name), lower(CAST(?2 AS TEXT))) > 0)`,
  ).get<{ n: number }>(query.status, query.nameContains ?? null)!.n;
}

/** The activity columns of the topic `topic` (a column or a parameter), `since` the active-since cut-off. */
function activityColumns(topic: string, since: string): string {
  return `
  (SELECT COUNT(*) FROM messages WHERE topic_id = ${topic}) AS messages,
  COALESCE((SELECT MAX(seq) FROM messages WHERE topic_id = ${topic}), 0) AS last_seq,
  (SELECT created_at FROM messages WHERE topic_id = ${topic} ORDER BY seq DESC LIMIT 1)
    AS last_message_at,
  (SELECT COUNT(*) FROM cursors WHERE topic_id = ${topic} AND updated_at >= ${since})
    AS active_agents,
  (SELECT state FROM bus_threads WHERE topic_id = ${topic}) AS thread_state`;
}

const SORT_SQL: Record<TopicSort, string> = {
  activity: "MAX(COALESCE(newest, 0), created_at, COALESCE(closed_at, 0)) DESC, created_at DESC",
  created: "created_at DESC",
  name: "lower(name), created_at DESC",
};

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
 * Delete a topic and everything in it: messages (their search rows,
 * vectors and chat extras go with them, by trigger), cursors, name
 * reservations, its seq counter and its questions. What the AgentChatBus
 * dialect keeps per thread is `chat/threads.ts`'s `deleteThreadRows`.
 */
export function deleteTopic(store: Store, topicId: string): DeletedRows {
  const count = (sql: string, scope?: DeclaredScope) =>
    Number(store.stmt(sql, scope).run(topicId).changes);
  const deleted = {
    messages: count("DELETE FROM messages WHERE topic_id = ?"),
    cursors: count("DELETE FROM cursors WHERE topic_id = ?", TOPIC_ROWS),
    reservations: count("DELETE FROM agent_name_reservations WHERE topic_id = ?"),
    questions: count("DELETE FROM questions WHERE topic_id = ?"),
  };
  count("DELETE FROM bus_waiters WHERE topic_id = ?", TOPIC_ROWS);
  count("DELETE FROM topic_seq WHERE topic_id = ?", TOPIC_ROWS);
  count("DELETE FROM topics WHERE topic_id = ?");
  return deleted;
}
