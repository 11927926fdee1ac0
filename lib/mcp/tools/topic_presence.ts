/**
 * `topic_presence`: who has synced recently.
 *
 * @module
 */

import { z } from "zod";
import { MAX_PRESENCE_LIMIT, topicPresence } from "../../bus/presence.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import { defineTool } from "../define_tool.ts";

/** The `topic_presence` tool. */
export const topicPresenceTool = defineTool({
  name: "topic_presence",
  title: "Topic presence",
  description:
    "List peers active on a topic in the last window_seconds (default 300), most recent first. " +
    "A peer counts as active when it has called sync or cursor_reset; joining alone does not count.",
  input: z.strictObject({
    topic_id: topicIdArg,
    window_seconds: z.int().min(1, "must be an int > 0").default(300),
    limit: z.int().min(1, "must be an int > 0").max(
      MAX_PRESENCE_LIMIT,
      `must be <= ${MAX_PRESENCE_LIMIT}`,
    ).default(200),
  }),
  output: z.object({
    topic_id: z.string(),
    window_seconds: z.int(),
    limit: z.int(),
    now: z.number(),
    peers: z.array(z.object({
      agent_name: z.string(),
      last_seq: z.int(),
      updated_at: z.number(),
      age_seconds: z.number(),
    })),
    count: z.int(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  run(args, { bus }) {
    const result = topicPresence(bus, {
      topicId: args.topic_id,
      windowSeconds: args.window_seconds,
      limit: args.limit,
    });
    const lines = result.peers.map((peer) =>
      `- ${peer.agent_name}: last_seq=${peer.last_seq}, active ${Math.round(peer.age_seconds)}s ago`
    );
    return {
      structured: result,
      text: `${result.count} peer(s) active in the last ${result.window_seconds}s` +
        (lines.length ? `:\n${lines.join("\n")}` : ""),
    };
  },
});
