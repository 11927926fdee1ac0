/**
 * `ask_poll` (student): the state of a question, without waiting.
 *
 * @module
 */

import { z } from "zod";
import { pollQuestion } from "../../bus/qa.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import { defineTool } from "../define_tool.ts";
import { questionIdArg, questionStateOutput, questionStateSchema } from "./_questions.ts";

/** The `ask_poll` tool. */
export const askPollTool = defineTool({
  name: "ask_poll",
  title: "Check a question",
  description:
    "Check a question you asked: 'pending' (not answered yet), 'answered' (with the answer), or " +
    "'cancelled'. Never waits; works on closed topics too.",
  input: z.strictObject({
    topic_id: topicIdArg,
    question_id: questionIdArg.describe("The question_id that ask returned"),
  }),
  output: questionStateSchema(["pending", "answered", "cancelled"]),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  warningsInText: false,
  async run(args, { bus, session, log }) {
    const state = pollQuestion(bus, { topicId: args.topic_id, questionId: args.question_id });
    // The outcome is now in front of the agent: the hooks stop reporting it.
    if (state.status !== "pending") await session.record?.seen(state.question_id, log);
    return questionStateOutput(state);
  },
});
