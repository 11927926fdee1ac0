/**
 * `bus.broadcast`: send a JSON body to every registered peer but yourself.
 *
 * @module
 */

import { z } from "zod";
import { broadcastMail } from "../../bus/mail.ts";
import { jsonValue } from "../../bus/validate.ts";
import { defineTool, requireAgent } from "../define_tool.ts";

/** The `bus.broadcast` tool. */
export const busBroadcastTool = defineTool({
  name: "bus.broadcast",
  title: "Broadcast to all peers",
  description:
    "Send a message to every peer registered on the bus right now, except yourself. Peers that " +
    "join later do not get it. body is any JSON value (required).",
  input: z.strictObject({ body: z.unknown().describe("Any JSON value (required)") }),
  output: z.object({ ids: z.array(z.string()), recipients: z.array(z.string()) }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  async run(args, ctx) {
    const content = jsonValue(args.body, "body", ctx.bus.config.maxMessageChars);
    const result = await broadcastMail(ctx.bus, {
      from: requireAgent(ctx),
      content,
      format: "json",
      source: "peer-bus",
    });
    return {
      structured: result,
      text: `broadcast to ${result.recipients.length} peer(s)` +
        (result.recipients.length ? `: ${result.recipients.join(", ")}` : ""),
    };
  },
});
