/**
 * What the student tools share: the question id argument, the output
 * schema of a question's state, and its text. An answered question's text is exactly
 * the seed's rendering (section 7.1), nothing before or after it.
 *
 * @module
 */

import { z } from "zod";
import { MAX_QUESTION_ID_CHARS, type QuestionState, renderStudentAnswer } from "../../bus/qa.ts";
import { quote } from "../text.ts";

/** A question id argument. */
export const questionIdArg = z.string().min(1, "must be a non-empty string")
  .max(MAX_QUESTION_ID_CHARS, `exceeds max length (${MAX_QUESTION_ID_CHARS})`);

/** The answer payload a student sees (never `teacher_notes`). */
export const studentPayloadSchema = z.object({
  answer_markdown: z.string(),
  repo_pointers: z.array(z.string()),
  suggested_followups: z.array(z.string()),
  teacher_addendum: z.string().optional(),
});

/** The output schema of a question's state, with the tool's own statuses. */
export function questionStateSchema<const S extends readonly [string, ...string[]]>(statuses: S) {
  return z.object({
    topic_id: z.string(),
    question_id: z.string(),
    status: z.enum(statuses),
    rendered_answer: z.string().optional().describe("The answer as shown to you (answered only)"),
    answer_payload: studentPayloadSchema.optional(),
    cancel_reason: z.string().nullable().optional(),
  });
}

/** structuredContent and text of a question's state. */
export function questionStateOutput<S extends string>(
  state: QuestionState<S>,
  options: { waitedSeconds?: number } = {},
): { structured: QuestionState<S> & { rendered_answer?: string }; text: string } {
  if (state.status === "answered" && state.answer_payload) {
    const rendered = renderStudentAnswer(state.topic_id, state.answer_payload);
    return { structured: { ...state, rendered_answer: rendered }, text: rendered };
  }
  const poll = `ask_poll(topic_id=${quote(state.topic_id)}, question_id=${
    quote(state.question_id)
  })`;
  const id = `question_id=${quote(state.question_id)}`;
  const texts: Record<string, string> = {
    queued: `Question queued (${id}, topic_id=${quote(state.topic_id)}). The teacher has not ` +
      `answered yet; check with ${poll}.`,
    timeout: `No answer within ${options.waitedSeconds ?? 0} s; the question is still pending ` +
      `(${id}). Check again with ${poll}.`,
    pending: `The question is still pending (${id}): the teacher has not answered yet. Check ` +
      `again later with ${poll}.`,
    cancelled: `The question was cancelled (${id})` +
      (state.cancel_reason ? `; reason: ${state.cancel_reason}` : "") + ".",
  };
  return { structured: state, text: texts[state.status] ?? `Question ${id}: ${state.status}` };
}
