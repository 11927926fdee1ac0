/**
 * `bus.send`: send a JSON body to one peer (seed 004).
 *
 * @module
 */

import { z } from "zod";
import { cleanMailAgent, sendMail } from "../../bus/mail.ts";
import { jsonValue } from "../../bus/validate.ts";
import { defineTool, requireAgent } from "../define_tool.ts";

/** The `bus.send` tool. */
export const busSendTool = defineTool({
  name: "bus.send",
  title: "Send to a peer",
  description:
    "Send a message to one peer on the bus. body is any JSON value (required); the peer gets it " +
    "back unchanged from bus.drain. See bus.peers for who is there.",
  input: z.strictObject({
    to: z.string().max(64, "exceeds max length (64)").describe("The peer's name"),
    body: z.unknown().describe("Any JSON value (required)"),
  }),
  output: z.object({ id: z.string(), to: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  async run(args, ctx) {
    const to = cleanMailAgent(args.to, "to");
    const content = jsonValue(args.body, "body", ctx.bus.config.maxMessageChars);
    const { id } = await sendMail(ctx.bus, {
      from: requireAgent(ctx),
      to,
      content,
      format: "json",
      source: "peer-bus",
    });
    return { structured: { id, to }, text: `sent id=${id} to=${to}` };
  },
});
