/**
 * `send_to_agent`: put a message in another agent's mailbox (seed 003).
 * The sender is the agent named in the URL path of the HTTP endpoint.
 *
 * @module
 */

import { z } from "zod";
import { MAX_MAIL_ID_CHARS, sendMail } from "../../bus/mail.ts";
import type { ResolvedConfig } from "../../config.ts";
import { defineTool, requireAgent } from "../define_tool.ts";

/** The `send_to_agent` tool. */
export const sendToAgentTool = defineTool({
  name: "send_to_agent",
  title: "Send mail to an agent",
  description:
    "Put a message in another agent's mailbox; it reads it with check_mail. Returns the msg_id. " +
    "Pass your own msg_id to make retries safe: sending the same msg_id again is a no-op.",
  input: (config: ResolvedConfig) =>
    z.strictObject({
      name: z.string().max(64, "exceeds max length (64)").describe("The recipient agent"),
      msg: z.string().max(config.maxMessageChars, `exceeds max length (${config.maxMessageChars})`)
        .describe("The message text"),
      msg_id: z.string().max(MAX_MAIL_ID_CHARS, `exceeds max length (${MAX_MAIL_ID_CHARS})`)
        .nullish().describe("Optional id for idempotent retries (default: a new UUID)"),
    }),
  output: z.object({ msg_id: z.string(), duplicate: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  usesDb: true,
  async run(args, ctx) {
    const { id, duplicate } = await sendMail(ctx.bus, {
      from: requireAgent(ctx),
      to: args.name,
      content: args.msg,
      format: "text",
      source: "http",
      id: args.msg_id ?? undefined,
    });
    return { structured: { msg_id: id, duplicate }, text: id };
  },
});
