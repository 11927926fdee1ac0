/**
 * `teacher_drain` (teacher): the pending questions of a topic, oldest
 * first. Works on closed topics, so a teacher can finish the backlog.
 *
 * @module
 */

import { z } from "zod";
import { drainQuestions, MAX_DRAIN_LIMIT } from "../../bus/qa.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";

/** The `teacher_drain` tool. */
export const teacherDrainTool = defineTool({
  name: "teacher_drain",
  title: "Drain pending questions",
  description: (config) =>
    "List the pending questions of a topic, oldest first (cancelled and answered ones are left " +
    "out). Answer them with teacher_publish. Optional wait_seconds (at most " +
    `${config.maxWaitSeconds}) waits for a question when none is pending.`,
  input: z.strictObject({
    topic_id: topicIdArg,
    limit: z.int().min(1, "must be an int >= 1").max(
      MAX_DRAIN_LIMIT,
      `must be <= ${MAX_DRAIN_LIMIT}`,
    )
      .default(20).describe("Most questions to return"),
    wait_seconds: z.int().min(0, "must be an int >= 0").max(86_400, "must be <= 86400").default(0)
      .describe("Seconds to wait for a question when none is pending (0 = return at once)"),
  }),
  output: z.object({
    pending: z.array(
      z.object({ question_id: z.string(), question_text: z.string(), asked_at: z.number() }),
    ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  async run(args, { bus, signal, progress }) {
    const { pending, warnings } = await drainQuestions(bus, {
      topicId: args.topic_id,
      limit: args.limit,
      waitSeconds: args.wait_seconds,
    }, {
      signal,
      onWaitProgress: (elapsed, total) =>
        progress(elapsed, total, `waiting for questions (${elapsed}s of ${total}s)`),
    });
    const items = pending.map((q) => ({
      question_id: q.question_id,
      question_text: q.question_text,
      asked_at: q.asked_at,
    }));
    const text = items.length === 0
      ? `No pending questions in topic ${quote(args.topic_id)}.`
      : `${items.length} pending question(s) in topic ${quote(args.topic_id)}, oldest first; ` +
        `answer with teacher_publish:\n` +
        items.map((q) => `\n[question_id=${quote(q.question_id)}]\n${q.question_text}`).join("\n");
    return { structured: { pending: items }, text, warnings };
  },
});
