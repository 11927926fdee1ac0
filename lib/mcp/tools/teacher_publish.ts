/**
 * `teacher_publish` (teacher): answer pending questions, many in one
 * transaction (all saved, or none).
 *
 * @module
 */

import { z } from "zod";
import {
  HARD_MAX_LIST_ITEMS,
  MAX_FOLLOWUP_CHARS,
  MAX_POINTER_CHARS,
  publishAnswers,
  SOFT_MAX_FOLLOWUPS,
  SOFT_MAX_REPO_POINTERS,
} from "../../bus/qa.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import type { ResolvedConfig } from "../../config.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";
import { questionIdArg } from "./_questions.ts";

function responseItem(config: ResolvedConfig) {
  const list = (maxChars: number) =>
    z.array(z.string().max(maxChars, `exceeds max length (${maxChars})`))
      .max(HARD_MAX_LIST_ITEMS, `has more than ${HARD_MAX_LIST_ITEMS} items`);
  return z.strictObject({
    question_id: questionIdArg,
    answer_markdown: z.string().max(
      config.qa.maxAnswerChars,
      `exceeds max length (${config.qa.maxAnswerChars})`,
    ),
    repo_pointers: list(MAX_POINTER_CHARS).nullish()
      .describe(`Files, modules or entry points to look at (first ${SOFT_MAX_REPO_POINTERS} kept)`),
    suggested_followups: list(MAX_FOLLOWUP_CHARS)
      .describe(`Good next questions for the student (first ${SOFT_MAX_FOLLOWUPS} kept)`),
    teacher_addendum: z.string().max(
      config.qa.maxTeacherNotesChars,
      `exceeds max length (${config.qa.maxTeacherNotesChars})`,
    ).nullish().describe("Extra context for the student, shown after the answer"),
    teacher_notes: z.string().max(
      config.qa.maxTeacherNotesChars,
      `exceeds max length (${config.qa.maxTeacherNotesChars})`,
    ).nullish().describe("Notes for teachers only; never shown to the student"),
  });
}

/** The `teacher_publish` tool. */
export const teacherPublishTool = defineTool({
  name: "teacher_publish",
  title: "Publish answers",
  description:
    "Answer pending questions of a topic. Each response needs question_id, answer_markdown and " +
    `suggested_followups (the student picks one as its next question; at most ${SOFT_MAX_FOLLOWUPS} ` +
    `are kept), optionally repo_pointers (at most ${SOFT_MAX_REPO_POINTERS}), teacher_addendum ` +
    "(extra context shown to the student after the answer) and teacher_notes (never shown to the " +
    "student). Questions that are not pending (answered, cancelled, missing " +
    "or in another topic) are skipped. All answers are saved in one transaction.",
  input: (config: ResolvedConfig) =>
    z.strictObject({
      topic_id: topicIdArg,
      responses: z.array(responseItem(config))
        .min(1, "must hold at least one response")
        .max(config.qa.maxPublishBatch, `has more than ${config.qa.maxPublishBatch} items`),
    }),
  output: z.object({ saved: z.int(), skipped: z.int() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  usesDb: true,
  async run(args, { bus, session }) {
    const { saved, skipped, warnings } = await publishAnswers(bus, {
      topicId: args.topic_id,
      responses: args.responses,
      answeredBy: session.agent ?? "teacher",
    });
    const lines = [`Saved ${saved} answer(s), skipped ${skipped.length}.`];
    for (const skip of skipped) {
      lines.push(`- skipped ${quote(skip.question_id)}: ${skip.reason.replace("_", " ")}`);
    }
    return { structured: { saved, skipped: skipped.length }, text: lines.join("\n"), warnings };
  },
});
