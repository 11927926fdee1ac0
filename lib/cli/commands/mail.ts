/**
 * `agent-bus mail …`: the direct mailboxes from the command line: send as
 * any agent, list mailboxes or peek into one, drain one, list running
 * peer-bus servers.
 *
 * @module
 */

import { drainMail, mailboxes, peekMailbox, registeredPeers, sendMail } from "../../bus/mail.ts";
import type { Bus } from "../../bus/mod.ts";
import {
  type CliContext,
  type Command,
  defineCommand,
  intOption,
  openCliRuntime,
  subcommandError,
  UsageError,
} from "../command.ts";
import { ago, table } from "../format.ts";

/** The commands of `mail`, as its usage lists them. */
const MAIL_COMMANDS = ["send", "list", "drain", "peers"] as const;

function isMailCommand(name: string | undefined): name is typeof MAIL_COMMANDS[number] {
  return (MAIL_COMMANDS as readonly (string | undefined)[]).includes(name);
}

const USAGE = `Usage: agent-bus mail <command> [options]

Commands:
  send TO TEXT [--from NAME] [--id ID]   Put a message in TO's mailbox (from "operator" by
                                         default; TEXT "-" reads stdin; --id makes retries safe)
  list [AGENT] [--limit N]               Every mailbox with its unread count; with AGENT, its
                                         unread messages (left unread)
  drain AGENT                            Take every unread message of AGENT (marks them read)
  peers                                  Peer-bus servers running now

Every command takes --json.`;

/** The `mail` command group. */
export const mailCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    from: { type: "string" },
    id: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    const [sub, ...rest] = positionals;
    // (Before the database is opened: a mistyped command must not create one.)
    if (!isMailCommand(sub)) throw subcommandError("mail", sub, MAIL_COMMANDS);
    await using runtime = openCliRuntime(ctx);
    const { bus } = runtime;
    switch (sub) {
      case "send":
        return await send(ctx, bus, rest, values);
      case "list":
        return list(ctx, bus, rest, values);
      case "drain":
        return await drain(ctx, bus, rest, values.json ?? false);
      case "peers": {
        const peers = registeredPeers(bus);
        if (values.json) ctx.print.json(peers);
        else ctx.print.out(peers.length ? peers.join("\n") : "No peer-bus servers are running.");
        return 0;
      }
    }
  },
});

/** `mail send TO TEXT|-`. */
async function send(
  ctx: CliContext,
  bus: Bus,
  rest: string[],
  values: { from?: string | undefined; id?: string | undefined; json?: boolean | undefined },
): Promise<number> {
  if (rest.length !== 2) throw new UsageError("mail send needs TO and TEXT (or - for stdin)");
  const content = rest[1] === "-" ? await new Response(ctx.io.stdin.readable).text() : rest[1]!;
  const result = await sendMail(bus, {
    from: values.from ?? "operator",
    to: rest[0]!,
    content,
    format: "text",
    source: "cli",
    id: values.id,
  });
  if (values.json) ctx.print.json({ msg_id: result.id, duplicate: result.duplicate });
  else ctx.print.out(`${result.duplicate ? "Already sent" : "Sent"} ${result.id} to ${rest[0]}`);
  return 0;
}

/** `mail list [AGENT]`: every mailbox, or one agent's unread mail (without reading it). */
function list(
  ctx: CliContext,
  bus: Bus,
  rest: string[],
  values: { limit?: string | undefined; json?: boolean | undefined },
): number {
  if (rest.length > 1) throw new UsageError("mail list takes at most one AGENT");
  if (rest.length === 0) {
    const boxes = mailboxes(bus);
    if (values.json) ctx.print.json(boxes);
    else if (boxes.length === 0) ctx.print.out("No mail yet.");
    else {
      ctx.print.out(
        table(
          ["AGENT", "UNREAD", "TOTAL"],
          boxes.map((b) => [b.agent, String(b.unread), String(b.total)]),
        ),
      );
    }
    return 0;
  }
  const agent = rest[0]!;
  const { messages, unread } = peekMailbox(bus, agent, intOption(values.limit, "limit", 50, 1));
  if (values.json) ctx.print.json({ agent, unread, messages });
  else if (messages.length === 0) ctx.print.out(`No unread mail for ${agent}.`);
  else {
    const style = ctx.print.style();
    ctx.print.out(
      `${unread} unread for ${agent}${
        unread > messages.length ? ` (showing ${messages.length})` : ""
      }:`,
    );
    for (const m of messages) {
      ctx.print.out(
        `${style.dim(m.id)} ${style.byName(m.from)} ${style.dim(ago(m.created))}: ${m.content}`,
      );
    }
  }
  return 0;
}

/** `mail drain AGENT`: read (and so mark read) all of an agent's unread mail. */
async function drain(ctx: CliContext, bus: Bus, rest: string[], json: boolean): Promise<number> {
  if (rest.length !== 1) throw new UsageError("mail drain needs one AGENT");
  const all = [];
  for (;;) {
    const { messages, hasMore } = await drainMail(bus, rest[0]!);
    all.push(...messages);
    if (!hasMore) break;
  }
  if (json) ctx.print.json(all);
  else if (all.length === 0) ctx.print.out(`No unread mail for ${rest[0]}.`);
  else {
    const style = ctx.print.style();
    for (const m of all) ctx.print.out(`${style.dim(m.id)} ${style.byName(m.from)}: ${m.content}`);
  }
  return 0;
}
