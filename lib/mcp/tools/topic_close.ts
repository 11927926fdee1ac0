/**
 * `topic_close`: close a topic to new messages (idempotent).
 *
 * @module
 */

import { z } from "zod";
import { closeReasonArg, topicIdArg } from "../../bus/schemas.ts";
import { closeTopic } from "../../bus/topics.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";

/** The `topic_close` tool. */
export const topicCloseTool = defineTool({
  name: "topic_close",
  title: "Close topic",
  description:
    "Close a topic: no more messages can be sent to it, but its history stays readable. " +
    "Closing an already closed topic changes nothing and returns warning ALREADY_CLOSED.",
  input: z.strictObject({
    topic_id: topicIdArg,
    reason: closeReasonArg,
  }),
  output: z.object({
    topic_id: z.string(),
    status: z.enum(["open", "closed"]),
    closed_at: z.number().nullable(),
    close_reason: z.string().nullable(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  usesDb: true,
  async run(args, { bus }) {
    const { topic, warnings } = await closeTopic(bus, {
      topicId: args.topic_id,
      reason: args.reason,
    });
    return {
      structured: {
        topic_id: topic.topic_id,
        status: topic.status,
        closed_at: topic.closed_at,
        close_reason: topic.close_reason,
      },
      text: `Topic ${quote(topic.topic_id)} is closed` +
        (topic.close_reason ? ` (reason: ${topic.close_reason})` : ""),
      warnings,
    };
  },
});
