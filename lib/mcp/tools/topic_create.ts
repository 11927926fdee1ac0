/**
 * `topic_create`: open a topic, or reuse the newest open one with that name.
 *
 * @module
 */

import { z } from "zod";
import { topicCreateInput } from "../../bus/schemas.ts";
import { createTopic } from "../../bus/topics.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";

/** The `topic_create` tool. */
export const topicCreateTool = defineTool({
  name: "topic_create",
  title: "Create topic",
  description:
    "Create a topic (a named conversation lane). With mode='reuse' (the default) and a name, " +
    "returns the newest open topic with exactly that name if one exists, so agents that agree on " +
    "a name meet in the same topic; mode='new' always creates a new one. Use the returned " +
    "topic_id with topic_join and sync. Without a name, the topic is named topic-<topic_id>.",
  input: topicCreateInput,
  output: z.object({
    topic_id: z.string(),
    name: z.string(),
    status: z.enum(["open", "closed"]),
    reused: z.boolean(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  async run(args, { bus }) {
    const { topic, reused } = await createTopic(bus, {
      name: args.name ?? undefined,
      metadata: args.metadata,
      mode: args.mode,
    });
    return {
      structured: { topic_id: topic.topic_id, name: topic.name, status: topic.status, reused },
      text: `Topic: name=${quote(topic.name)}, topic_id=${quote(topic.topic_id)}, status=${
        quote(topic.status)
      }${reused ? " (existing topic reused)" : ""}`,
    };
  },
});
