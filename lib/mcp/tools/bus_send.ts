/**
 * `bus.send`: send a JSON body to one peer (seed 004).
 *
 * @module
 */

import { z } from "zod";
import { cleanMailAgent, nameKnown, peersOf, sendMail } from "../../bus/mail.ts";
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
    const from = requireAgent(ctx);
    const known = to === from || nameKnown(ctx.bus, to);
    const { id } = await sendMail(ctx.bus, {
      from,
      to,
      content,
      format: "json",
      source: "peer-bus",
    });
    const peers = known ? [] : peersOf(ctx.bus, from).peers;
    const warnings = known ? [] : [{
      code: "UNKNOWN_PEER",
      message: `No peer has used the name "${to}" yet, so the message waits in its mailbox until ` +
        `one does; check the spelling. Peers now: ${peers.length > 0 ? peers.join(", ") : "none"}`,
      context: { to, peers },
    }];
    return { structured: { id, to }, text: `sent id=${id} to=${to}`, warnings };
  },
});
