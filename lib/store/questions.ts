/**
 * SQL for the `questions` table of the teacher/student roles (seed 001).
 *
 * Plain functions over a {@linkcode Store}; callers wrap them in
 * `store.read()` or `store.immediate()`.
 *
 * @module
 */

import type { Store } from "./types.ts";

/** Stored question statuses. */
export type QuestionStatus = "pending" | "answered" | "cancelled";

/** A row of `questions`. */
export interface QuestionRow {
  question_id: string;
  topic_id: string;
  asked_by: string;
  question_text: string;
  asked_at: number;
  status: QuestionStatus;
  cancel_reason: string | null;
  answered_at: number | null;
  answered_by: string | null;
  answer_payload_json: string | null;
}

/** Insert a new pending question. */
export function insertQuestion(
  store: Store,
  row: Pick<QuestionRow, "question_id" | "topic_id" | "asked_by" | "question_text" | "asked_at">,
): void {
  store.stmt(
    `INSERT INTO questions (question_id, topic_id, asked_by, question_text, asked_at, status)
     VALUES (?, ?, ?, ?, ?, 'pending')`,
  ).run(row.question_id, row.topic_id, row.asked_by, row.question_text, row.asked_at);
}

/** The question with this id. */
export function getQuestion(store: Store, questionId: string): QuestionRow | undefined {
  return store.stmt("SELECT * FROM questions WHERE question_id = ?").get(questionId) as
    | QuestionRow
    | undefined;
}

/** Whether a question id is taken. */
export function questionIdTaken(store: Store, questionId: string): boolean {
  return store.stmt("SELECT 1 FROM questions WHERE question_id = ?").get(questionId) !== undefined;
}

/** Pending questions of a topic, oldest first. */
export function pendingQuestions(
  store: Store,
  { topicId, limit }: { topicId: string; limit: number },
): QuestionRow[] {
  return store.stmt(
    `SELECT * FROM questions WHERE topic_id = ? AND status = 'pending'
     ORDER BY asked_at, rowid LIMIT ?`,
  ).all<QuestionRow>(topicId, limit);
}

/** Pending questions on any topic, oldest first. */
export function pendingQuestionsAnywhere(store: Store, limit: number): QuestionRow[] {
  return store.stmt(
    "SELECT * FROM questions WHERE status = 'pending' ORDER BY asked_at, rowid LIMIT ?",
  ).all<QuestionRow>(limit);
}

/** Answer a question if it is still pending in this topic; false when it was not. */
export function answerQuestion(
  store: Store,
  args: {
    questionId: string;
    topicId: string;
    answeredBy: string;
    answeredAt: number;
    payloadJson: string;
  },
): boolean {
  const result = store.stmt(
    `UPDATE questions SET status = 'answered', answered_at = ?, answered_by = ?, answer_payload_json = ?
     WHERE question_id = ? AND topic_id = ? AND status = 'pending'`,
  ).run(args.answeredAt, args.answeredBy, args.payloadJson, args.questionId, args.topicId);
  return result.changes === 1;
}

/** Cancel a pending question (the reason may be null). */
export function cancelQuestion(
  store: Store,
  { questionId, reason }: { questionId: string; reason: string | null },
): void {
  store.stmt(
    "UPDATE questions SET status = 'cancelled', cancel_reason = ? WHERE question_id = ? AND status = 'pending'",
  ).run(reason, questionId);
}
