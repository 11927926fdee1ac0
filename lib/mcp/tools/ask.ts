/**
 * `ask` (student): put a question to the teachers of a topic, and
 * optionally wait for the answer.
 *
 * @module
 */

import { z } from "zod";
import { ask } from "../../bus/qa.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import type { ResolvedConfig } from "../../config.ts";
import { defineTool } from "../define_tool.ts";
import { questionStateOutput, questionStateSchema } from "./_questions.ts";

/** The `ask` tool. */
export const askTool = defineTool({
  name: "ask",
  title: "Ask the teacher",
  description: (config) =>
    "Ask a question on an open topic. With wait_seconds=0 (the default) it returns at once with " +
    "status 'queued' and a question_id to check with ask_poll; with wait_seconds > 0 it waits " +
    `(at most ${config.maxWaitSeconds} s) and returns 'answered' with the answer, or 'timeout' ` +
    "if the question is still pending. An answer ends with FOLLOW_UP_REQUIRED and suggested " +
    "follow-ups: ask exactly one of them next, or reply NO_FOLLOWUP_NEEDED with a summary.",
  input: (config: ResolvedConfig) =>
    z.strictObject({
      topic_id: topicIdArg,
      question: z.string().min(1, "must be a non-empty string")
        .max(config.qa.maxQuestionChars, `exceeds max length (${config.qa.maxQuestionChars})`)
        .describe("Your question"),
      wait_seconds: z.int().min(0, "must be an int >= 0").max(86_400, "must be <= 86400")
        .default(0).describe("Seconds to wait for the answer (0 = return at once)"),
    }),
  output: questionStateSchema(["queued", "answered", "timeout", "cancelled"]),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  warningsInText: false,
  async run(args, { bus, session, signal, progress, log }) {
    const { state, warnings } = await ask(bus, {
      topicId: args.topic_id,
      question: args.question,
      askedBy: session.agent ?? "student",
      waitSeconds: args.wait_seconds,
    }, {
      record: session.record,
      signal,
      onWaitProgress: (elapsed, total) =>
        progress(elapsed, total, `waiting for the answer (${elapsed}s of ${total}s)`),
    });
    if (state.status === "answered" || state.status === "cancelled") {
      await session.record?.seen(state.question_id, log);
    }
    const waited = Math.min(args.wait_seconds, bus.config.maxWaitSeconds);
    return { ...questionStateOutput(state, { waitedSeconds: waited }), warnings };
  },
});
