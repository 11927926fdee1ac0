/**
 * `check_mail`: pop the oldest unread message of the calling agent (seed
 * 003), or null when its mailbox is empty.
 *
 * @module
 */

import { z } from "zod";
import { popOne } from "../../bus/mail.ts";
import { defineTool, requireAgent } from "../define_tool.ts";

/** The `check_mail` tool. */
export const checkMailTool = defineTool({
  name: "check_mail",
  title: "Check mail",
  description:
    "Take the oldest unread message from your mailbox: {id, from, content}, or null when it is " +
    "empty. Each message is returned exactly once.",
  input: z.strictObject({}),
  output: z.object({
    message: z.object({ id: z.string(), from: z.string(), content: z.string() }).nullable(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  async run(_args, ctx) {
    const mail = await popOne(ctx.bus, requireAgent(ctx));
    const message = mail ? { id: mail.id, from: mail.from, content: mail.content } : null;
    return { structured: { message }, text: JSON.stringify(message) };
  },
});
