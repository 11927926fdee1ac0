/**
 * `cursor_reset`: move your read position (replay history or skip ahead).
 *
 * @module
 */

import { z } from "zod";
import { cursorReset } from "../../bus/presence.ts";
import { topicIdArg } from "../../bus/schemas.ts";
import { defineTool } from "../define_tool.ts";

/** The `cursor_reset` tool. */
export const cursorResetTool = defineTool({
  name: "cursor_reset",
  title: "Reset cursor",
  description:
    "Set your server-side cursor on a topic. last_seq=0 (the default) replays the whole history " +
    "on the next sync calls; any seq up to the latest skips to there. Requires topic_join first.",
  input: z.strictObject({
    topic_id: topicIdArg,
    last_seq: z.int().min(0, "must be an int >= 0").default(0),
  }),
  output: z.object({
    topic_id: z.string(),
    agent_name: z.string(),
    cursor: z.object({ last_seq: z.int(), updated_at: z.number() }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  usesDb: true,
  async run(args, { bus, session }) {
    const identity = session.require(args.topic_id);
    const result = await cursorReset(bus, identity, {
      topicId: args.topic_id,
      lastSeq: args.last_seq,
    });
    return {
      structured: result,
      text:
        `Cursor of ${result.agent_name} on topic ${result.topic_id} set to last_seq=${result.cursor.last_seq}`,
    };
  },
});
