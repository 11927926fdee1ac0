/**
 * `bus.peers`: your own bus name and the peers registered now.
 *
 * @module
 */

import { z } from "zod";
import { peersOf } from "../../bus/mail.ts";
import { defineTool, requireAgent } from "../define_tool.ts";

/** The `bus.peers` tool. */
export const busPeersTool = defineTool({
  name: "bus.peers",
  title: "List peers",
  description: "Your own name on the bus (self) and the names of the other peers running now.",
  input: z.strictObject({}),
  output: z.object({ self: z.string(), peers: z.array(z.string()) }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  usesDb: true,
  run(_args, ctx) {
    const result = peersOf(ctx.bus, requireAgent(ctx));
    return {
      structured: result,
      text: `self=${result.self}; peers: ${
        result.peers.length ? result.peers.join(", ") : "(none)"
      }`,
    };
  },
});
