/**
 * `topic_resolve`: find a topic by its exact name.
 *
 * @module
 */

import { z } from "zod";
import { topicNameArg } from "../../bus/schemas.ts";
import { resolveTopic } from "../../bus/topics.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";

/** The `topic_resolve` tool. */
export const topicResolveTool = defineTool({
  name: "topic_resolve",
  title: "Resolve topic by name",
  description: "Find the newest open topic with exactly this name and return its topic_id. With " +
    "allow_closed=true, falls back to the newest closed topic of that name.",
  input: z.strictObject({
    name: topicNameArg.describe("Exact topic name"),
    allow_closed: z.boolean().default(false),
  }),
  output: z.object({
    topic_id: z.string(),
    name: z.string(),
    status: z.enum(["open", "closed"]),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  run(args, { bus }) {
    const topic = resolveTopic(bus, { name: args.name, allowClosed: args.allow_closed });
    return {
      structured: { topic_id: topic.topic_id, name: topic.name, status: topic.status },
      text: `Topic: name=${quote(topic.name)}, topic_id=${quote(topic.topic_id)}, status=${
        quote(topic.status)
      }`,
    };
  },
});
