/**
 * `topic_join`: take a unique agent name in a topic (spec v6.3 section 4.6).
 *
 * @module
 */

import { z } from "zod";
import { joinTopic } from "../../bus/names.ts";
import { agentNameArg, reclaimTokenArg, topicIdArg, topicNameArg } from "../../bus/schemas.ts";
import { defineTool } from "../define_tool.ts";
import { quote } from "../text.ts";

/** The `topic_join` tool. */
export const topicJoinTool = defineTool({
  name: "topic_join",
  title: "Join topic",
  description:
    "Join a topic as agent_name before calling sync or cursor_reset on it. Give exactly one of " +
    "topic_id or name. The first join of a name reserves it and returns a reclaim_token: save " +
    "(topic_id, agent_name, reclaim_token) and pass the token to reclaim the same name after a " +
    "restart. Names are unique per topic; a taken name fails with AGENT_NAME_IN_USE and " +
    "suggested_agent_names. Use a descriptive name, e.g. 'codex reviewer'.",
  input: z.strictObject({
    agent_name: agentNameArg.describe("Your name in this topic (max 64 characters)"),
    topic_id: topicIdArg.nullish().describe("Topic to join (give this or name)"),
    name: topicNameArg.nullish().describe("Topic name to join (give this or topic_id)"),
    allow_closed: z.boolean().default(false).describe(
      "When joining by name, also match a closed topic",
    ),
    reclaim_token: reclaimTokenArg.nullish().describe(
      "Token from an earlier join, to reclaim the same agent_name",
    ),
  }),
  output: z.object({
    topic_id: z.string(),
    name: z.string(),
    status: z.enum(["open", "closed"]),
    agent_name: z.string(),
    reclaim_token: z.string(),
    requested_agent_name: z.string().optional(),
    suggested_agent_names: z.array(z.string()).optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  usesDb: true,
  async run(args, { bus, session }) {
    const joined = await joinTopic(bus, session, {
      agentName: args.agent_name,
      topicId: args.topic_id ?? undefined,
      name: args.name ?? undefined,
      allowClosed: args.allow_closed,
      reclaimToken: args.reclaim_token ?? undefined,
    });
    const closed = joined.status === "closed"
      ? " The topic is closed: you can read, not send."
      : "";
    return {
      structured: {
        topic_id: joined.topic_id,
        name: joined.name,
        status: joined.status,
        agent_name: joined.agent_name,
        reclaim_token: joined.reclaim_token,
      },
      text: `Joined topic name=${quote(joined.name)} topic_id=${quote(joined.topic_id)} as ` +
        `agent_name=${quote(joined.agent_name)}${
          joined.reclaimed ? " (reclaimed)" : ""
        }.${closed}\n` +
        `reclaim_token=${joined.reclaim_token}\n` +
        `Save the topic_id, agent_name and reclaim_token: after a restart, topic_join again with ` +
        `the token to keep this name.`,
    };
  },
});
