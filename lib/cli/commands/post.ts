/**
 * `agent-bus post TOPIC TEXT`: a person joins the conversation. Agents get
 * the message through `sync` like any other.
 *
 * @module
 */

import { findTopic } from "../../bus/admin.ts";
import { postAs } from "../../bus/sync.ts";
import { type Command, defineCommand, openCliRuntime, UsageError } from "../command.ts";

const USAGE = `Usage: agent-bus post TOPIC TEXT [options]

Post a message to a topic as a person. TEXT "-" reads the body from stdin.

  --as NAME        Sender name (default operator)
  --type TYPE      message (default), question, answer, or any short type
  --reply-to ID    The message_id this answers or replies to
  --id ID          A client_message_id: posting again with the same id is a no-op
  --json           Print the stored message as JSON`;

/** The `post` command. */
export const postCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    as: { type: "string" },
    type: { type: "string" },
    "reply-to": { type: "string" },
    id: { type: "string" },
    json: { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length !== 2) {
      throw new UsageError("post needs a TOPIC and a TEXT (or - for stdin)");
    }
    const [ref, text] = positionals as [string, string];
    const body = text === "-" ? await new Response(ctx.io.stdin.readable).text() : text;
    if (body.trim() === "") throw new UsageError("the message is empty");
    await using runtime = openCliRuntime(ctx);
    const { bus } = runtime;
    const topic = findTopic(bus, ref);
    const [sent] = await postAs(bus, {
      topicId: topic.topic_id,
      sender: values.as ?? "operator",
      outbox: [{
        content_markdown: body,
        message_type: values.type,
        reply_to: values["reply-to"],
        client_message_id: values.id,
      }],
    });
    if (values.json) ctx.print.json(sent);
    else {
      ctx.print.out(
        `${sent!.duplicate ? "Already posted" : "Posted"} #${
          sent!.message.seq
        } to "${topic.name}" as ` +
          `${sent!.message.sender} (message_id ${sent!.message.message_id})`,
      );
    }
    return 0;
  },
});
