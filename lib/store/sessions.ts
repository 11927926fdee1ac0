/**
 * SQL for the session register (`bus_sessions` and its two lists) and the
 * hooks' loop-safety state (`bus_hook_state`): where a stdio MCP server
 * writes who it is (host, its own and its client's pid, working directory,
 * profile, mail or role name, the topics it joined and the questions it
 * asked), so that a client's hook, another process, can find it.
 *
 * @module
 */

import type { Store } from "./types.ts";

/** A row of `bus_sessions`. */
export interface SessionRow {
  session_id: string;
  host: string;
  server_pid: number;
  client_pid: number;
  cwd: string;
  profile: string;
  /** The mail identity (peerbus) or the role's name (teacher, student), if any. */
  agent: string | null;
  started_at: number;
  /** When the server last said it runs (Unix seconds). */
  seen_at: number;
}

/** A topic a session joined, under the name it joined as. */
export interface SessionTopicRow {
  session_id: string;
  topic_id: string;
  agent_name: string;
}

/** Record a server's session. */
export function insertSession(store: Store, row: SessionRow): void {
  store.stmt(
    `INSERT INTO bus_sessions
       (session_id, host, server_pid, client_pid, cwd, profile, agent, started_at, seen_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.session_id,
    row.host,
    row.server_pid,
    row.client_pid,
    row.cwd,
    row.profile,
    row.agent,
    row.started_at,
    row.seen_at,
  );
}

/** The server of `sessionId` still runs, as of `now`. */
export function touchSession(store: Store, sessionId: string, now: number): void {
  store.stmt("UPDATE bus_sessions SET seen_at = ? WHERE session_id = ?").run(now, sessionId);
}

/** Forget the sessions (and their lists) whose server has not said it runs since `before`. */
export function forgetExpiredSessions(store: Store, before: number): void {
  const expired = "SELECT session_id FROM bus_sessions WHERE seen_at < ?";
  for (const table of ["bus_session_topics", "bus_session_questions"]) {
    store.stmt(`DELETE FROM ${table} WHERE session_id IN (${expired})`).run(before);
  }
  store.stmt("DELETE FROM bus_sessions WHERE seen_at < ?").run(before);
}

/** Forget a session and its lists. */
export function deleteSession(store: Store, sessionId: string): void {
  store.stmt("DELETE FROM bus_session_topics WHERE session_id = ?").run(sessionId);
  store.stmt("DELETE FROM bus_session_questions WHERE session_id = ?").run(sessionId);
  store.stmt("DELETE FROM bus_sessions WHERE session_id = ?").run(sessionId);
}

/** Record (or rename) the name a session holds in a topic. */
export function recordSessionTopic(store: Store, row: SessionTopicRow): void {
  store.stmt(
    `INSERT INTO bus_session_topics (session_id, topic_id, agent_name) VALUES (?, ?, ?)
     ON CONFLICT (session_id, topic_id) DO UPDATE SET agent_name = excluded.agent_name`,
  ).run(row.session_id, row.topic_id, row.agent_name);
}

/** Record a question a session asked and has not yet seen settled. */
export function recordSessionQuestion(store: Store, sessionId: string, questionId: string): void {
  store.stmt(
    "INSERT OR IGNORE INTO bus_session_questions (session_id, question_id) VALUES (?, ?)",
  ).run(sessionId, questionId);
}

/** Forget a question whose answer (or cancellation) the session has seen. */
export function forgetSessionQuestion(store: Store, sessionId: string, questionId: string): void {
  store.stmt("DELETE FROM bus_session_questions WHERE session_id = ? AND question_id = ?").run(
    sessionId,
    questionId,
  );
}

/** The sessions recorded on one host, and those whose server could not tell its host. */
export function sessionsOnHost(store: Store, host: string): SessionRow[] {
  return store.stmt(
    "SELECT * FROM bus_sessions WHERE host = ? OR host = '' ORDER BY started_at",
  ).all<SessionRow>(host);
}

/** The topics a session joined. */
export function sessionTopics(store: Store, sessionId: string): SessionTopicRow[] {
  return store.stmt(
    "SELECT * FROM bus_session_topics WHERE session_id = ? ORDER BY topic_id",
  ).all<SessionTopicRow>(sessionId);
}

/** The questions a session asked that are settled (answered or cancelled) and not yet seen. */
export function settledSessionQuestions(
  store: Store,
  sessionId: string,
): { question_id: string; topic_id: string; status: string; answered_by: string | null }[] {
  return store.stmt(
    `SELECT q.question_id AS question_id, q.topic_id AS topic_id, q.status AS status,
            q.answered_by AS answered_by
     FROM bus_session_questions s JOIN questions q ON q.question_id = s.question_id
     WHERE s.session_id = ? AND q.status <> 'pending' ORDER BY q.answered_at`,
  ).all<{
    question_id: string;
    topic_id: string;
    status: string;
    answered_by: string | null;
  }>(sessionId);
}

/** What a client session's stop hook last reported, and how many stops in a row it blocked. */
export interface HookStateRow {
  hook_session: string;
  blocks: number;
  /** JSON array of the markers of what was reported. */
  reported: string;
  updated_at: number;
}

/** The stop hook's state for a client session. */
export function getHookState(store: Store, hookSession: string): HookStateRow | undefined {
  return store.stmt("SELECT * FROM bus_hook_state WHERE hook_session = ?").get(hookSession) as
    | HookStateRow
    | undefined;
}

/** Save the stop hook's state, and drop states untouched since `staleBefore`. */
export function putHookState(store: Store, row: HookStateRow, staleBefore: number): void {
  store.stmt(
    `INSERT INTO bus_hook_state (hook_session, blocks, reported, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (hook_session) DO UPDATE
       SET blocks = excluded.blocks, reported = excluded.reported, updated_at = excluded.updated_at`,
  ).run(row.hook_session, row.blocks, row.reported, row.updated_at);
  store.stmt("DELETE FROM bus_hook_state WHERE updated_at < ?").run(staleBefore);
}
