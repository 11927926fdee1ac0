/**
 * Teacher/student questions (seed 001, spec v3.1) on the shared topics.
 *
 * A student asks on an open topic; the question waits as `pending` until a
 * teacher answers it (`answered`) or the student withdraws it
 * (`cancelled`). Every call is one transaction; a publish of many answers
 * commits all of them or none. Answers carry a JSON payload whose
 * `teacher_notes` are for teachers only: {@linkcode studentPayload} is the
 * one way a payload leaves for a student, and it drops them.
 *
 * Closing a topic stops new questions but not the backlog: the teacher
 * may still drain and answer, and the student may still poll.
 *
 * @module
 */

import { countWithinBudget } from "../budget.ts";
import { counted } from "../strings.ts";
import { BusError, invalidArgument, type Warning } from "../errors.ts";
import {
  answerQuestion,
  cancelQuestion,
  getQuestion,
  insertQuestion,
  pendingQuestions,
  questionIdTaken,
  type QuestionRow,
} from "../store/questions.ts";
import type { SessionRecord } from "./attendance.ts";
import { newId } from "./ids.ts";
import { type Bus, write } from "./mod.ts";
import { screenSecrets } from "./secrets.ts";
import { requireTopic } from "./topics.ts";
import { capWaitSeconds, waitFor, type WaitOptions } from "./waiting.ts";

/** `repo_pointers` kept per answer; more are cut with `REPO_POINTERS_TRUNCATED`. */
export const SOFT_MAX_REPO_POINTERS = 10;
/** `suggested_followups` kept per answer; more are cut with `FOLLOWUPS_TRUNCATED`. */
export const SOFT_MAX_FOLLOWUPS = 5;
/** Most items a list may have at all (beyond it: INVALID_ARGUMENT). */
export const HARD_MAX_LIST_ITEMS = 100;
/** Longest repo pointer. */
export const MAX_POINTER_CHARS = 1000;
/** Longest suggested follow-up. */
export const MAX_FOLLOWUP_CHARS = 2000;
/** Longest question id accepted as an argument. */
export const MAX_QUESTION_ID_CHARS = 64;
/** Longest cancel reason. */
export const MAX_CANCEL_REASON_CHARS = 2000;
/** Most questions one `teacher_drain` returns. */
export const MAX_DRAIN_LIMIT = 200;

/** The stored answer (`answer_payload_json`). */
export interface AnswerPayload {
  answer_markdown: string;
  repo_pointers: string[];
  suggested_followups: string[];
  /** Extra context for the student (seed 001, section 4.2), shown after the answer. */
  teacher_addendum?: string;
  /** Teachers only; never shown to a student. */
  teacher_notes?: string;
}

/** The answer as a student sees it. */
export type StudentPayload = Omit<AnswerPayload, "teacher_notes">;

/** One answer of a `teacher_publish`, as its schema has typed it. */
export interface ResponseItem {
  question_id: string;
  answer_markdown: string;
  repo_pointers?: string[] | null | undefined;
  suggested_followups: string[];
  teacher_addendum?: string | null | undefined;
  teacher_notes?: string | null | undefined;
}

/** A question as the student tools report it; `S` is the tool's status vocabulary. */
export interface QuestionState<S extends string = QuestionRow["status"]> {
  topic_id: string;
  question_id: string;
  status: S;
  answer_payload?: StudentPayload;
  cancel_reason?: string | null;
}

/**
 * Ask a question on an open topic, and with `waitSeconds > 0` wait for its
 * answer.
 *
 * @returns `queued` (no wait), `answered`, `timeout` (still pending), or
 *   `cancelled` (withdrawn by another call while this one waited)
 * @throws {BusError} `TOPIC_NOT_FOUND`, `TOPIC_CLOSED`, `INVALID_ARGUMENT`, `DB_BUSY`
 */
export async function ask(
  bus: Bus,
  args: { topicId: string; question: string; askedBy: string; waitSeconds: number },
  options: WaitOptions & { record?: SessionRecord | undefined } = {},
): Promise<{ state: QuestionState<AskStatus>; warnings: Warning[] }> {
  if (args.question.trim() === "") throw invalidArgument("question must not be blank");
  const { maxQuestionChars } = bus.config.qa;
  if (args.question.length > maxQuestionChars) {
    throw invalidArgument(`question exceeds max length (${maxQuestionChars})`);
  }
  const question = screenSecrets(args.question, { mode: bus.config.secrets, field: "question" });
  const warnings: Warning[] = [];
  const waitSeconds = capWaitSeconds(bus, args.waitSeconds, warnings);
  const questionId = await write(bus, () => {
    const topic = requireTopic(bus.store, args.topicId);
    if (topic.status === "closed") {
      throw new BusError(
        "TOPIC_CLOSED",
        `Topic "${topic.topic_id}" is closed; no new questions can be asked. Questions asked before ` +
          "it closed can still be polled",
        { context: { topic_id: topic.topic_id } },
      );
    }
    let id = newId();
    while (questionIdTaken(bus.store, id)) id = newId();
    insertQuestion(bus.store, {
      question_id: id,
      topic_id: topic.topic_id,
      asked_by: args.askedBy,
      question_text: question,
      asked_at: bus.now(),
    });
    options.record?.asked(bus.store, id);
    return id;
  });
  if (waitSeconds === 0) {
    return {
      state: { topic_id: args.topicId, question_id: questionId, status: "queued" },
      warnings,
    };
  }
  bus.log.debug("ask waiting", { topic_id: args.topicId, question_id: questionId });
  const settled = await waitFor(
    bus,
    () => {
      const row = bus.store.read(() => getQuestion(bus.store, questionId));
      return row && row.status !== "pending" ? row : undefined;
    },
    waitSeconds,
    options,
  );
  // A settled question is answered or cancelled, both statuses of `ask` too.
  const state: QuestionState<AskStatus> = settled
    ? stateOf(settled) as QuestionState<AskStatus>
    : { topic_id: args.topicId, question_id: questionId, status: "timeout" };
  return { state, warnings };
}

/** Tool-level statuses of `ask`. */
export type AskStatus = "queued" | "answered" | "timeout" | "cancelled";

/**
 * The state of a question, for the student.
 *
 * @throws {BusError} `QUESTION_NOT_FOUND`, `TOPIC_MISMATCH`
 */
export function pollQuestion(
  bus: Bus,
  args: { topicId: string; questionId: string },
): QuestionState {
  return stateOf(bus.store.read(() => requireQuestion(bus, args)));
}

/**
 * Withdraw a pending question. Cancelling a cancelled question changes
 * nothing (the first reason stays) and warns `ALREADY_CANCELLED`.
 *
 * @throws {BusError} `QUESTION_NOT_FOUND`, `TOPIC_MISMATCH`, `INVALID_ARGUMENT` (answered)
 */
export async function cancelAsk(
  bus: Bus,
  args: { topicId: string; questionId: string; reason?: string | null | undefined },
): Promise<{ state: QuestionState; warnings: Warning[] }> {
  return await write(bus, () => {
    const row = requireQuestion(bus, args);
    if (row.status === "answered") {
      throw invalidArgument(
        `Question "${row.question_id}" is already answered and cannot be cancelled; read it with ask_poll`,
      );
    }
    if (row.status === "cancelled") {
      return {
        state: stateOf(row),
        warnings: [{
          code: "ALREADY_CANCELLED",
          message: "The question was already cancelled; nothing changed",
          context: { question_id: row.question_id, cancel_reason: row.cancel_reason },
        }],
      };
    }
    const reason = args.reason?.trim() ? args.reason : null;
    cancelQuestion(bus.store, { questionId: row.question_id, reason });
    return { state: stateOf({ ...row, status: "cancelled", cancel_reason: reason }), warnings: [] };
  });
}

/**
 * Pending questions of a topic, oldest first; with `waitSeconds > 0` and
 * none pending, wait for the first. Works on closed topics too.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function drainQuestions(
  bus: Bus,
  args: { topicId: string; limit: number; waitSeconds: number },
  options: WaitOptions = {},
): Promise<{ pending: QuestionRow[]; warnings: Warning[] }> {
  if (args.limit < 1 || args.limit > MAX_DRAIN_LIMIT) {
    throw invalidArgument(`limit must be between 1 and ${MAX_DRAIN_LIMIT}`);
  }
  const warnings: Warning[] = [];
  const waitSeconds = capWaitSeconds(bus, args.waitSeconds, warnings);
  const read = () =>
    bus.store.read(() => {
      requireTopic(bus.store, args.topicId);
      return pendingQuestions(bus.store, { topicId: args.topicId, limit: args.limit });
    });
  let pending = read();
  if (pending.length === 0 && waitSeconds > 0) {
    bus.log.debug("teacher_drain waiting", { topic_id: args.topicId });
    pending = await waitFor(
      bus,
      () => {
        const found = read();
        return found.length > 0 ? found : undefined;
      },
      waitSeconds,
      options,
    ) ?? [];
  }
  const budget = bus.config.toolResultMaxBytes;
  const fit = countWithinBudget(pending, (q) => [q.question_text], budget);
  if (fit < pending.length) {
    warnings.push({
      code: "RESULTS_TRUNCATED",
      message:
        `${counted(pending.length - fit, "more pending question")} left out to keep this result ` +
        `within ${budget} bytes; answer these and drain again`,
      context: { returned: fit, left_out: pending.length - fit },
    });
    pending = pending.slice(0, fit);
  }
  return { pending, warnings };
}

/** Why a `teacher_publish` item was not saved. */
export interface Skip {
  question_id: string;
  reason: "not_found" | "topic_mismatch" | "answered" | "cancelled";
}

/**
 * Save answers to pending questions of a topic, all in one transaction.
 * Items for missing, non-pending or other-topic questions are skipped; long
 * lists are cut to the soft limits with a warning per item.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `DB_BUSY` (nothing is saved)
 */
export async function publishAnswers(
  bus: Bus,
  args: { topicId: string; responses: ResponseItem[]; answeredBy: string },
): Promise<{ saved: number; skipped: Skip[]; warnings: Warning[] }> {
  checkResponses(bus, args.responses);
  // Payloads are built and serialized before the write lock is taken.
  const prepared = args.responses.map((raw, i) => {
    const item = screenResponse(bus, raw, `responses[${i}]`);
    const { payload, truncations } = payloadOf(item);
    return { item, truncations, payloadJson: JSON.stringify(payload) };
  });
  return await write(bus, () => {
    requireTopic(bus.store, args.topicId);
    const now = bus.now();
    const skipped: Skip[] = [];
    const warnings: Warning[] = [];
    let saved = 0;
    for (const { item, truncations, payloadJson } of prepared) {
      const answered = answerQuestion(bus.store, {
        questionId: item.question_id,
        topicId: args.topicId,
        answeredBy: args.answeredBy,
        answeredAt: now,
        payloadJson,
      });
      if (!answered) {
        skipped.push({
          question_id: item.question_id,
          reason: skipReason(bus, item.question_id, args.topicId),
        });
        continue;
      }
      saved++;
      warnings.push(...truncations);
    }
    return { saved, skipped, warnings };
  });
}

/** The student's view of a stored payload: never `teacher_notes`. */
export function studentPayload(json: string): StudentPayload {
  const stored = JSON.parse(json) as Partial<AnswerPayload>;
  const payload: StudentPayload = {
    answer_markdown: String(stored.answer_markdown ?? ""),
    repo_pointers: (stored.repo_pointers ?? []).map(String),
    suggested_followups: (stored.suggested_followups ?? []).map(String),
  };
  if (stored.teacher_addendum) payload.teacher_addendum = String(stored.teacher_addendum);
  return payload;
}

/**
 * The student-facing text of an answer: seed 001, section 7.1, to the
 * letter, with at most five follow-ups, each on one line. A
 * `teacher_addendum` (the seed's student-visible extra context) follows the
 * answer, before the follow-up block.
 */
export function renderStudentAnswer(topicId: string, payload: StudentPayload): string {
  const followups = payload.suggested_followups.slice(0, SOFT_MAX_FOLLOWUPS)
    .map((q, i) => `${i + 1}) ${q.replace(/\s+/g, " ").trim()}`);
  return [
    payload.answer_markdown,
    ...(payload.teacher_addendum ? ["", payload.teacher_addendum] : []),
    "",
    "---",
    "FOLLOW_UP_REQUIRED",
    "Choose ONE follow-up question and call:",
    `ask(topic_id="${topicId}", question="<your question>")`,
    "",
    "Suggested follow-ups:",
    ...(followups.length > 0
      ? followups
      : ["(none suggested: ask about whatever is still unclear)"]),
    "",
    "If you fully understand, reply with:",
    "NO_FOLLOWUP_NEEDED",
    "and provide a 3-5 bullet summary of what you learned.",
  ].join("\n");
}

function requireQuestion(bus: Bus, args: { topicId: string; questionId: string }): QuestionRow {
  const row = getQuestion(bus.store, args.questionId);
  if (!row) {
    throw new BusError("QUESTION_NOT_FOUND", `Question "${args.questionId}" not found`, {
      context: { question_id: args.questionId },
    });
  }
  if (row.topic_id !== args.topicId) {
    throw new BusError(
      "TOPIC_MISMATCH",
      `Question "${args.questionId}" belongs to topic "${row.topic_id}", not "${args.topicId}"`,
      {
        context: {
          question_id: args.questionId,
          topic_id: args.topicId,
          question_topic_id: row.topic_id,
        },
      },
    );
  }
  return row;
}

function stateOf(row: QuestionRow): QuestionState {
  const state: QuestionState = {
    topic_id: row.topic_id,
    question_id: row.question_id,
    status: row.status,
  };
  if (row.status === "answered" && row.answer_payload_json !== null) {
    state.answer_payload = studentPayload(row.answer_payload_json);
  }
  if (row.status === "cancelled") state.cancel_reason = row.cancel_reason;
  return state;
}

/**
 * The hard limits of seed 001 (section 8.2) and our list bounds, for every
 * surface: one bad response fails the whole call.
 *
 * @throws {BusError} `INVALID_ARGUMENT` naming the response and field
 */
function checkResponses(bus: Bus, responses: readonly ResponseItem[]): void {
  const { maxAnswerChars, maxTeacherNotesChars, maxPublishBatch } = bus.config.qa;
  if (responses.length === 0) throw invalidArgument("responses must hold at least one response");
  if (responses.length > maxPublishBatch) {
    throw invalidArgument(`responses has more than ${maxPublishBatch} items`);
  }
  const text = (value: string | null | undefined, field: string, max: number) => {
    if (value !== null && value !== undefined && value.length > max) {
      throw invalidArgument(`${field} exceeds max length (${max})`);
    }
  };
  const list = (values: readonly string[] | null | undefined, field: string, max: number) => {
    if (!values) return;
    if (values.length > HARD_MAX_LIST_ITEMS) {
      throw invalidArgument(`${field} has more than ${HARD_MAX_LIST_ITEMS} items`);
    }
    values.forEach((value, i) => text(value, `${field}[${i}]`, max));
  };
  responses.forEach((item, i) => {
    const at = `responses[${i}]`;
    text(item.answer_markdown, `${at}.answer_markdown`, maxAnswerChars);
    text(item.teacher_notes, `${at}.teacher_notes`, maxTeacherNotesChars);
    text(item.teacher_addendum, `${at}.teacher_addendum`, maxTeacherNotesChars);
    list(item.repo_pointers, `${at}.repo_pointers`, MAX_POINTER_CHARS);
    list(item.suggested_followups, `${at}.suggested_followups`, MAX_FOLLOWUP_CHARS);
  });
}

/** A response with its secrets screened, field by field (`AGENT_BUS_SECRETS`). */
function screenResponse(bus: Bus, item: ResponseItem, at: string): ResponseItem {
  const mode = bus.config.secrets;
  const text = (value: string, field: string) =>
    screenSecrets(value, { mode, field: `${at}.${field}` });
  const optional = (value: string | null | undefined, field: string) =>
    value === null || value === undefined ? value : text(value, field);
  const list = (values: string[] | null | undefined, field: string) =>
    values?.map((value, i) => text(value, `${field}[${i}]`)) ?? values;
  return {
    ...item,
    answer_markdown: text(item.answer_markdown, "answer_markdown"),
    repo_pointers: list(item.repo_pointers, "repo_pointers"),
    suggested_followups: list(item.suggested_followups, "suggested_followups") ?? [],
    teacher_addendum: optional(item.teacher_addendum, "teacher_addendum"),
    teacher_notes: optional(item.teacher_notes, "teacher_notes"),
  };
}

function payloadOf(item: ResponseItem): { payload: AnswerPayload; truncations: Warning[] } {
  const truncations: Warning[] = [];
  const cut = (list: string[], max: number, code: string): string[] => {
    if (list.length <= max) return list;
    truncations.push({
      code,
      message: `Kept the first ${max} of ${list.length}`,
      context: { question_id: item.question_id, original_count: list.length, kept_count: max },
    });
    return list.slice(0, max);
  };
  const payload: AnswerPayload = {
    answer_markdown: item.answer_markdown,
    repo_pointers: cut(item.repo_pointers ?? [], SOFT_MAX_REPO_POINTERS, "REPO_POINTERS_TRUNCATED"),
    suggested_followups: cut(item.suggested_followups, SOFT_MAX_FOLLOWUPS, "FOLLOWUPS_TRUNCATED"),
  };
  if (item.teacher_addendum) payload.teacher_addendum = item.teacher_addendum;
  if (item.teacher_notes) payload.teacher_notes = item.teacher_notes;
  return { payload, truncations };
}

function skipReason(bus: Bus, questionId: string, topicId: string): Skip["reason"] {
  const row = getQuestion(bus.store, questionId);
  if (!row) return "not_found";
  if (row.topic_id !== topicId) return "topic_mismatch";
  return row.status === "cancelled" ? "cancelled" : "answered";
}
