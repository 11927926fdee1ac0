/**
 * `ask_cancel` (student): withdraw a pending question (idempotent).
 *
 * @module
 */

import { z } from "zod";
import { cancelAsk, MAX_CANCEL_REASON_CHARS } from "../../bus/qa.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";
import { questionIdArg } from "./_questions.ts";

/** The `ask_cancel` tool. */
export const askCancelTool = defineTool({
  name: "ask_cancel",
  title: "Cancel a question",
  description:
    "Withdraw a question that is still pending, so teachers no longer see it. Cancelling again " +
    "changes nothing; an answered question cannot be cancelled.",
  input: z.strictObject({
    topic_id: topicIdArg,
    question_id: questionIdArg,
    reason: z.string().max(
      MAX_CANCEL_REASON_CHARS,
      `exceeds max length (${MAX_CANCEL_REASON_CHARS})`,
    )
      .nullish().describe("Why (optional; kept from the first cancel)"),
  }),
  output: z.object({
    topic_id: z.string(),
    question_id: z.string(),
    status: z.literal("cancelled"),
    cancel_reason: z.string().nullable().optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  usesDb: true,
  warningsInText: false,
  async run(args, { bus }) {
    const { state, warnings } = await cancelAsk(bus, {
      topicId: args.topic_id,
      questionId: args.question_id,
      reason: args.reason,
    });
    const again = warnings.length > 0 ? " (it already was)" : "";
    return {
      structured: {
        topic_id: state.topic_id,
        question_id: state.question_id,
        status: "cancelled" as const,
        cancel_reason: state.cancel_reason ?? null,
      },
      text: `Question ${quote(state.question_id)} is cancelled${again}` +
        (state.cancel_reason ? `; reason: ${state.cancel_reason}` : ""),
      warnings,
    };
  },
});
