/**
 * SQL for the AgentChatBus dialect (seed 002): what it adds to a topic (its
 * thread state), its registered agents, single-use reply tokens, refresh
 * requests, wait states, and per-message extras (role, priority, edits,
 * reactions, attachments). Messages themselves are the bus's `messages`
 * rows, so every dialect reads one stream.
 *
 * Secrets (agent tokens, reply tokens) are stored only as SHA-256 hashes.
 *
 * @module
 */

import { type Query, type Store, TOPIC_ROWS } from "./types.ts";
import { LATEST_SEQ_SQL, type MessageRow } from "./messages.ts";
import { GET_TOPIC_SQL, type TopicRow } from "./topics.ts";

// ---------------------------------------------------------------- threads

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
const THREAD_STATUS =
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
  ).get(name) as ThreadView | undefined;
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
  ).all(...params, query.limit) as unknown as ThreadView[];
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

// ----------------------------------------------------------------- agents

/** A row of `bus_agents`. */
export interface AgentRow {
  agent_id: string;
  name: string;
  display_name: string | null;
  ide: string;
  model: string;
  description: string;
  capabilities_json: string;
  skills_json: string;
  emoji: string;
  token_hash: string;
  registered_at: number;
  last_heartbeat: number;
  last_activity: string;
  last_activity_time: number;
}

/** Insert a registered agent. */
export function insertAgent(store: Store, row: AgentRow): void {
  store.stmt(
    `INSERT INTO bus_agents (agent_id, name, display_name, ide, model, description,
       capabilities_json, skills_json, emoji, token_hash, registered_at, last_heartbeat,
       last_activity, last_activity_time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.agent_id,
    row.name,
    row.display_name,
    row.ide,
    row.model,
    row.description,
    row.capabilities_json,
    row.skills_json,
    row.emoji,
    row.token_hash,
    row.registered_at,
    row.last_heartbeat,
    row.last_activity,
    row.last_activity_time,
  );
}

/** The statement of {@linkcode getAgent}, for a batch of reads (`Store.gather`). */
export const GET_AGENT_SQL = "SELECT * FROM bus_agents WHERE agent_id = ?";

/** The agent with this id. */
export function getAgent(store: Store, agentId: string): AgentRow | undefined {
  return store.stmt(GET_AGENT_SQL).get(agentId) as
    | AgentRow
    | undefined;
}

/** True when an agent already uses this internal name. */
export function agentNameTaken(store: Store, name: string): boolean {
  return store.stmt("SELECT 1 FROM bus_agents WHERE name = ?").get(name) !== undefined;
}

/** Every agent, oldest registration first; with `after`, those after that place in the order. */
export function listAgents(
  store: Store,
  limit: number,
  after?: { at: number; key: string },
): AgentRow[] {
  return pageInOrder(store, { table: "bus_agents", at: "registered_at", key: "agent_id" }, {
    limit,
    after,
  }) as unknown as AgentRow[];
}

/**
 * Rows of `table` in the order of its columns `at`, then `key`, after a
 * place in that order when given. Table and column names are this module's
 * own, never input.
 */
function pageInOrder(
  store: Store,
  order: { table: string; at: string; key: string },
  { limit, after }: { limit: number; after?: { at: number; key: string } | undefined },
): Record<string, unknown>[] {
  const { table, at, key } = order;
  const sorted = `ORDER BY ${at}, ${key}`;
  if (!after) return store.stmt(`SELECT * FROM ${table} ${sorted} LIMIT ?`).all(limit);
  return store.stmt(
    `SELECT * FROM ${table} WHERE ${at} > ?1 OR (${at} = ?1 AND ${key} > ?2) ${sorted} LIMIT ?3`,
  ).all(after.at, after.key, limit);
}

/** Emojis of agents active since `since` (so a new agent can pick another). */
export function activeEmojis(store: Store, since: number): string[] {
  return (store.stmt(
    "SELECT emoji FROM bus_agents WHERE MAX(last_heartbeat, last_activity_time) >= ?",
  ).all(since) as { emoji: string }[]).map((row) => row.emoji);
}

/** Record what an agent just did (and, for a heartbeat, its heartbeat). */
export function touchAgent(
  store: Store,
  { agentId, activity, now, heartbeat }: {
    agentId: string;
    activity: string;
    now: number;
    heartbeat?: boolean;
  },
): void {
  // A repeat of the same activity within a second is not written again (a busy poster's
  // presence is current enough, and its post dirties one page fewer).
  store.stmt(
    `UPDATE bus_agents SET last_activity = ?1, last_activity_time = ?2,
       last_heartbeat = CASE WHEN ?3 <> 0 THEN ?2 ELSE last_heartbeat END
     WHERE agent_id = ?4 AND (last_activity <> ?1 OR last_activity_time < ?2 - 1
       OR (?3 <> 0 AND last_heartbeat < ?2 - 1))`,
  ).run(activity, now, heartbeat ? 1 : 0, agentId);
}

/** Fields an agent may change after registering (undefined: keep). */
export interface AgentChanges {
  display_name?: string | null | undefined;
  description?: string | undefined;
  capabilities_json?: string | undefined;
  skills_json?: string | undefined;
  emoji?: string | undefined;
}

/** Change the given fields of an agent. */
export function updateAgent(
  store: Store,
  { agentId, changes }: { agentId: string; changes: AgentChanges },
): void {
  const columns = Object.entries(changes).filter(([, value]) => value !== undefined);
  if (columns.length === 0) return;
  // Column names come from AgentChanges' keys, never from input.
  store.stmt(
    `UPDATE bus_agents SET ${columns.map(([column]) => `${column} = ?`).join(", ")}
     WHERE agent_id = ?`,
  ).run(...columns.map(([, value]) => value as string | null), agentId);
}

/** An agent's last activity after an operator forced it offline: offline until it acts again. */
export const KICKED_ACTIVITY = "kicked";

/** Remove an agent and its wait states. */
export function deleteAgent(store: Store, agentId: string): void {
  store.stmt("DELETE FROM bus_agents WHERE agent_id = ?").run(agentId);
  exitAgentWaits(store, agentId);
}

// ----------------------------------------------------------- reply tokens

/** A row of `bus_reply_tokens`. */
export interface ReplyTokenRow {
  token_hash: string;
  topic_id: string;
  agent_id: string | null;
  source: string;
  issued_at: number;
  consumed_at: number | null;
}

/**
 * Consumed tokens are kept this long (a replay within it is reported as a
 * replay; later, as an unknown token: both tell the agent to call msg_wait).
 */
const CONSUMED_TOKEN_KEEP_SECONDS = 600;
/** Unbound tokens (anonymous msg_wait) never used are dropped after this long. */
const UNUSED_UNBOUND_KEEP_SECONDS = 86_400;

/**
 * Store a newly issued reply token, and drop the same holder's tokens that
 * are past keeping, so the table stays bounded however many are issued.
 */
export function insertReplyToken(store: Store, row: Omit<ReplyTokenRow, "consumed_at">): void {
  store.stmt(
    `INSERT INTO bus_reply_tokens (token_hash, topic_id, agent_id, source, issued_at, consumed_at)
     VALUES (?, ?, ?, ?, ?, NULL)`,
    TOPIC_ROWS,
  ).run(row.token_hash, row.topic_id, row.agent_id, row.source, row.issued_at);
  // Two range deletes on the (topic, agent, consumed_at) index: one statement with an OR would
  // scan all of the holder's tokens on every post.
  store.stmt(
    "DELETE FROM bus_reply_tokens WHERE topic_id = ? AND agent_id IS ? AND consumed_at < ?",
    TOPIC_ROWS,
  ).run(row.topic_id, row.agent_id, row.issued_at - CONSUMED_TOKEN_KEEP_SECONDS);
  if (row.agent_id === null) {
    store.stmt(
      `DELETE FROM bus_reply_tokens WHERE topic_id = ? AND agent_id IS NULL
         AND consumed_at IS NULL AND issued_at < ?`,
      TOPIC_ROWS,
    ).run(row.topic_id, row.issued_at - UNUSED_UNBOUND_KEEP_SECONDS);
  }
}

/** The statement of {@linkcode getReplyToken}, for a batch of reads (`Store.gather`). */
export const GET_REPLY_TOKEN_SQL = "SELECT * FROM bus_reply_tokens WHERE token_hash = ?";

/** The token with this hash. */
export function getReplyToken(store: Store, tokenHash: string): ReplyTokenRow | undefined {
  return store.stmt(GET_REPLY_TOKEN_SQL).get(tokenHash) as
    | ReplyTokenRow
    | undefined;
}

/** Mark one token used. */
export function consumeReplyToken(
  store: Store,
  { tokenHash, now }: { tokenHash: string; now: number },
): void {
  store.stmt("UPDATE bus_reply_tokens SET consumed_at = ? WHERE token_hash = ?").run(
    now,
    tokenHash,
  );
}

/**
 * Mark an agent's unused tokens in a thread used: all of them, those of one
 * `source`, or all but `exceptHash`.
 */
export function invalidateReplyTokens(
  store: Store,
  { topicId, agentId, source, exceptHash, now }: {
    topicId: string;
    agentId: string;
    source?: string;
    exceptHash?: string;
    now: number;
  },
): void {
  store.stmt(
    `UPDATE bus_reply_tokens SET consumed_at = ?
     WHERE topic_id = ? AND agent_id = ? AND consumed_at IS NULL
       AND (CAST(? AS TEXT) IS NULL OR source = ?) AND (CAST(? AS TEXT) IS NULL OR token_hash <> ?)`,
    TOPIC_ROWS,
  ).run(
    now,
    topicId,
    agentId,
    source ?? null,
    source ?? null,
    exceptHash ?? null,
    exceptHash ?? null,
  );
}

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

/** Hashes of an agent's unused tokens in a thread, newest first (at most `limit`). */
export function unusedTokenHashes(
  store: Store,
  { topicId, agentId, limit }: { topicId: string; agentId: string; limit: number },
): string[] {
  return (store.stmt(
    `SELECT token_hash FROM bus_reply_tokens
     WHERE topic_id = ? AND agent_id = ? AND consumed_at IS NULL
     ORDER BY issued_at DESC LIMIT ?`,
  ).all(topicId, agentId, limit) as { token_hash: string }[]).map((row) => row.token_hash);
}

// ------------------------------------------------------- refresh requests

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

// ------------------------------------------------------------ wait states

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
    .all(agentId) as { topic_id: string }[]).map((row) => row.topic_id);
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
  ).all(topicId, now) as unknown as ChatWaitRow[];
}

/** The agents waiting in any thread now (waiting counts as being online). */
export function waitingAgentIds(store: Store, now: number): string[] {
  return (store.stmt("SELECT DISTINCT agent_id FROM bus_chat_waits WHERE until > ?").all(now) as {
    agent_id: string;
  }[]).map((row) => row.agent_id);
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

// ------------------------------------------------------- message extras

/** A message with what the chat dialect adds to it (defaults for messages of other dialects). */
export interface ChatMessageRow extends MessageRow {
  author_id: string | null;
  role: string;
  priority: string;
  edit_version: number;
  edited_at: number | null;
}

const CHAT_MESSAGE_SELECT = `SELECT m.*, c.author_id, COALESCE(c.role, 'user') AS role,
  COALESCE(c.priority, 'normal') AS priority, COALESCE(c.edit_version, 0) AS edit_version,
  c.edited_at FROM messages m LEFT JOIN bus_chat_messages c ON c.message_id = m.message_id`;

/** Store what the chat dialect adds to a message just inserted. */
export function insertChatExtras(
  store: Store,
  row: {
    message_id: string;
    author_id: string | null;
    role: string;
    priority: string;
    /** (An imported message may have been edited before.) */
    edit_version?: number;
    edited_at?: number | null;
  },
): void {
  store.stmt(
    `INSERT INTO bus_chat_messages (message_id, author_id, role, priority, edit_version, edited_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(
    row.message_id,
    row.author_id,
    row.role,
    row.priority,
    row.edit_version ?? 0,
    row.edited_at ?? null,
  );
}

/** One message with its extras. */
export function getChatMessage(store: Store, messageId: string): ChatMessageRow | undefined {
  return store.stmt(`${CHAT_MESSAGE_SELECT} WHERE m.message_id = ?`).get(messageId) as
    | ChatMessageRow
    | undefined;
}

/** The newest `limit` messages of a thread after `afterSeq`, oldest first. */
export function chatMessagesNewest(
  store: Store,
  { topicId, afterSeq, limit }: { topicId: string; afterSeq: number; limit: number },
): ChatMessageRow[] {
  return (store.stmt(
    `${CHAT_MESSAGE_SELECT} WHERE m.topic_id = ? AND m.seq > ? ORDER BY m.seq DESC LIMIT ?`,
  ).all(topicId, afterSeq, limit) as unknown as ChatMessageRow[]).reverse();
}

/** Messages of a thread after `afterSeq`, oldest first, optionally of one priority. */
export function chatMessagesAfter(
  store: Store,
  { topicId, afterSeq, priority, limit }: {
    topicId: string;
    afterSeq: number;
    priority?: string | undefined;
    limit: number;
  },
): ChatMessageRow[] {
  if (priority === undefined) {
    return store.stmt(
      `${CHAT_MESSAGE_SELECT} WHERE m.topic_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
    ).all(topicId, afterSeq, limit) as unknown as ChatMessageRow[];
  }
  return store.stmt(
    `${CHAT_MESSAGE_SELECT} WHERE m.topic_id = ? AND m.seq > ?
       AND COALESCE(c.priority, 'normal') = ? ORDER BY m.seq LIMIT ?`,
  ).all(topicId, afterSeq, priority, limit) as unknown as ChatMessageRow[];
}

/** Replace a message's body, keeping the old one as edit `version`. */
export function recordEdit(
  store: Store,
  { messageId, oldContent, newContent, editedBy, version, now }: {
    messageId: string;
    oldContent: string;
    newContent: string;
    editedBy: string;
    version: number;
    now: number;
  },
): void {
  store.stmt(
    `INSERT INTO bus_message_edits (message_id, version, old_content, edited_by, created_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(messageId, version, oldContent, editedBy, now);
  store.stmt("UPDATE messages SET content_markdown = ? WHERE message_id = ?").run(
    newContent,
    messageId,
  );
  store.stmt(
    `INSERT INTO bus_chat_messages (message_id, author_id, role, priority, edit_version, edited_at)
     VALUES (?, NULL, 'user', 'normal', ?, ?)
     ON CONFLICT (message_id) DO UPDATE SET edit_version = excluded.edit_version,
       edited_at = excluded.edited_at`,
  ).run(messageId, version, now);
}

/** A row of `bus_message_edits`. */
export interface EditRow {
  message_id: string;
  version: number;
  old_content: string;
  edited_by: string;
  created_at: number;
}

/** Store an earlier version of a message as it was recorded elsewhere (an import). */
export function insertEdit(store: Store, row: EditRow): void {
  store.stmt(
    `INSERT OR IGNORE INTO bus_message_edits (message_id, version, old_content, edited_by, created_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(row.message_id, row.version, row.old_content, row.edited_by, row.created_at);
}

/** A message's edits, oldest first. */
export function editsOf(store: Store, messageId: string): EditRow[] {
  return store.stmt("SELECT * FROM bus_message_edits WHERE message_id = ? ORDER BY version").all(
    messageId,
  ) as unknown as EditRow[];
}

/** A row of `bus_reactions`. */
export interface ReactionRow {
  message_id: string;
  agent_id: string;
  reaction: string;
  created_at: number;
}

/** Add a reaction; false when it was already there. */
export function addReaction(store: Store, row: ReactionRow): boolean {
  return Number(
    store.stmt(
      `INSERT OR IGNORE INTO bus_reactions (message_id, agent_id, reaction, created_at)
       VALUES (?, ?, ?, ?)`,
    ).run(row.message_id, row.agent_id, row.reaction, row.created_at).changes,
  ) > 0;
}

/** How many reactions a message has. */
export function reactionCount(store: Store, messageId: string): number {
  const row = store.stmt("SELECT count(*) AS n FROM bus_reactions WHERE message_id = ?").get(
    messageId,
  ) as { n: number | bigint };
  return Number(row.n);
}

/** One reaction. */
export function getReaction(
  store: Store,
  { messageId, agentId, reaction }: { messageId: string; agentId: string; reaction: string },
): ReactionRow | undefined {
  return store.stmt(
    "SELECT * FROM bus_reactions WHERE message_id = ? AND agent_id = ? AND reaction = ?",
  ).get(messageId, agentId, reaction) as ReactionRow | undefined;
}

/** Remove a reaction; false when it was not there. */
export function removeReaction(
  store: Store,
  { messageId, agentId, reaction }: { messageId: string; agentId: string; reaction: string },
): boolean {
  return Number(
    store.stmt("DELETE FROM bus_reactions WHERE message_id = ? AND agent_id = ? AND reaction = ?")
      .run(messageId, agentId, reaction).changes,
  ) > 0;
}

/** The reactions of these messages, in the order they were made. */
export function reactionsOf(store: Store, messageIds: readonly string[]): ReactionRow[] {
  if (messageIds.length === 0) return [];
  return store.stmt(REACTIONS_SQL).all(JSON.stringify(messageIds)) as unknown as ReactionRow[];
}

const REACTIONS_SQL =
  `SELECT * FROM bus_reactions WHERE message_id IN (SELECT value FROM json_each(?))
  ORDER BY created_at, agent_id, reaction`;

/** What the chat dialect added to a message (a row of `bus_chat_messages`). */
export interface ChatExtrasRow {
  message_id: string;
  author_id: string | null;
  role: string;
  priority: string;
  edit_version: number;
  edited_at: number | null;
}

/** The chat extras of these messages (only those that have some). */
export function chatExtrasOf(store: Store, messageIds: readonly string[]): ChatExtrasRow[] {
  if (messageIds.length === 0) return [];
  return store.stmt(
    "SELECT * FROM bus_chat_messages WHERE message_id IN (SELECT value FROM json_each(?))",
  ).all(JSON.stringify(messageIds)) as unknown as ChatExtrasRow[];
}

/** The attachments of these messages without their data: position and type. */
export function attachmentTypesOf(
  store: Store,
  messageIds: readonly string[],
): Omit<AttachmentRow, "data">[] {
  if (messageIds.length === 0) return [];
  return store.stmt(
    `SELECT message_id, position, mime_type FROM bus_attachments
     WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, position`,
  ).all(JSON.stringify(messageIds)) as unknown as Omit<AttachmentRow, "data">[];
}

/** One attachment. */
export function getAttachment(
  store: Store,
  { messageId, position }: { messageId: string; position: number },
): AttachmentRow | undefined {
  return store.stmt("SELECT * FROM bus_attachments WHERE message_id = ? AND position = ?").get(
    messageId,
    position,
  ) as AttachmentRow | undefined;
}

/** A row of `bus_attachments`: one image, base64. */
export interface AttachmentRow {
  message_id: string;
  position: number;
  mime_type: string;
  data: string;
}

/** Store a message's attachment. */
export function insertAttachment(store: Store, row: AttachmentRow): void {
  store.stmt(
    "INSERT INTO bus_attachments (message_id, position, mime_type, data) VALUES (?, ?, ?, ?)",
  ).run(row.message_id, row.position, row.mime_type, row.data);
}

/** What a listing shows beside its messages. */
export interface MessageExtras {
  reactions: ReactionRow[];
  /** Empty unless asked for. */
  attachments: AttachmentRow[];
  /** The agents among the authors. */
  authors: AgentRow[];
}

/**
 * The reactions, attachments (when `withAttachments`) and author agents of
 * `messageIds`, read at once (one round trip on PostgreSQL).
 */
export function readMessageExtras(
  store: Store,
  { messageIds, authorIds, withAttachments }: {
    messageIds: readonly string[];
    authorIds: readonly string[];
    withAttachments: boolean;
  },
): MessageExtras {
  if (messageIds.length === 0) return { reactions: [], attachments: [], authors: [] };
  const ids = JSON.stringify(messageIds);
  const [reactions, authors, attachments] = store.gather([
    { sql: REACTIONS_SQL, params: [ids] },
    {
      sql: "SELECT * FROM bus_agents WHERE agent_id IN (SELECT value FROM json_each(?))",
      params: [JSON.stringify(authorIds)],
    },
    ...(withAttachments
      ? [{
        sql: `SELECT * FROM bus_attachments WHERE message_id IN (SELECT value FROM json_each(?))
              ORDER BY message_id, position`,
        params: [ids],
      }]
      : []),
  ]);
  return {
    reactions: reactions as unknown as ReactionRow[],
    attachments: (attachments ?? []) as unknown as AttachmentRow[],
    authors: authors as unknown as AgentRow[],
  };
}

// -------------------------------------------------------------- templates

/** A row of `bus_templates` (a custom template; the built-ins live in code). */
export interface TemplateRow {
  id: string;
  name: string;
  description: string | null;
  system_prompt: string | null;
  default_metadata_json: string | null;
  created_at: number;
}

/** Delete a custom template; false when there was none. */
export function deleteTemplate(store: Store, id: string): boolean {
  return Number(store.stmt("DELETE FROM bus_templates WHERE id = ?").run(id).changes) > 0;
}

/** Create or replace a custom template. */
export function putTemplate(store: Store, row: TemplateRow): void {
  store.stmt(
    `INSERT OR REPLACE INTO bus_templates (id, name, description, system_prompt,
       default_metadata_json, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id,
    row.name,
    row.description,
    row.system_prompt,
    row.default_metadata_json,
    row.created_at,
  );
}

/** A custom template. */
export function getTemplate(store: Store, id: string): TemplateRow | undefined {
  return store.stmt("SELECT * FROM bus_templates WHERE id = ?").get(id) as TemplateRow | undefined;
}

/** Custom templates, oldest first; with `after`, those after that place in the order. */
export function listTemplates(
  store: Store,
  limit: number,
  after?: { at: number; key: string },
): TemplateRow[] {
  return pageInOrder(store, { table: "bus_templates", at: "created_at", key: "id" }, {
    limit,
    after,
  }) as unknown as TemplateRow[];
}

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
  ).all() as { status: string; n: number }[];
  const windows = since.map((_, i) => `SUM(CASE WHEN created_at >= ? THEN 1 ELSE 0 END) AS s${i}`);
  // Our metadata is compact JSON, so a stop reason reads as this exact text.
  const reasons = COUNTED_STOP_REASONS.map((reason, i) =>
    `SUM(CASE WHEN metadata_json LIKE '%"stop_reason":"${reason}"%' THEN 1 ELSE 0 END) AS r${i}`
  );
  const totals = store.stmt(
    `SELECT COUNT(*) AS n, ${[...windows, ...reasons].join(", ")} FROM messages`,
  ).get(...since) as Record<string, number | null>;
  const gap = store.stmt(
    `SELECT AVG(gap) AS gap FROM (
       SELECT created_at - LAG(created_at) OVER (PARTITION BY topic_id ORDER BY seq) AS gap
       FROM messages
       WHERE topic_id IN (SELECT DISTINCT topic_id FROM messages WHERE created_at >= ?)
     ) gaps WHERE gap IS NOT NULL`,
  ).get(activeSince) as { gap: number | null };
  // Online as `agentInfo` says: not kicked, and heard from lately or waiting in msg_wait now.
  const agents = store.stmt(
    `SELECT COUNT(*) AS n,
       SUM(CASE WHEN last_activity <> ?1 AND (last_heartbeat >= ?2 OR last_activity_time >= ?2
         OR agent_id IN (SELECT agent_id FROM bus_chat_waits WHERE until > ?3)) THEN 1 ELSE 0 END)
         AS online
     FROM bus_agents`,
  ).get(KICKED_ACTIVITY, onlineSince, now) as { n: number; online: number | null };
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

/** Registered agents that posted in a thread (at most `limit`). */
export function threadAuthorIds(store: Store, topicId: string, limit: number): string[] {
  return (store.stmt(
    `SELECT DISTINCT c.author_id AS agent_id FROM messages m
     JOIN bus_chat_messages c ON c.message_id = m.message_id
     WHERE m.topic_id = ? AND c.author_id IS NOT NULL LIMIT ?`,
  ).all(topicId, limit) as { agent_id: string }[]).map((row) => row.agent_id);
}
