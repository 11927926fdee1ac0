/**
 * `agent-bus topics …`: list, show, create, close, rename, delete topics
 * and see who is present.
 *
 * @module
 */

import {
  deleteTopic,
  findTopic,
  latestMessages,
  PRESENCE_WINDOW_SECONDS,
  renameTopic,
  topicSummaries,
  topicSummary,
} from "../../bus/admin.ts";
import { topicPresence } from "../../bus/presence.ts";
import { closeTopic, createTopic, MAX_TOPIC_LIST } from "../../bus/topics.ts";
import {
  choiceOption,
  type CliContext,
  type Command,
  defineCommand,
  intOption,
  openCliRuntime,
  subcommandError,
  UsageError,
} from "../command.ts";
import { ago, table } from "../format.ts";
import { counted } from "../../strings.ts";
import { renderMessageLines } from "../render.ts";

/** The commands of `topics`, as its usage lists them. */
const TOPICS_COMMANDS = ["list", "show", "create", "close", "rename", "delete", "presence"];

const USAGE = `Usage: agent-bus topics <command> [options]

Commands:
  list [--status open|closed|all] [--limit N]   Topics newest first, with message counts,
                                                last activity and agents present (default open)
  show TOPIC [--messages N]                     One topic, who is present, its last N messages (10)
  create NAME [--new]                           Open a topic (reuses an open one of that name
                                                unless --new)
  close TOPIC [--reason TEXT]                   Close a topic to new messages
  rename TOPIC NEW_NAME                         Rename a topic (message bodies are not touched)
  delete TOPIC --yes                            Delete a topic and everything in it
  presence TOPIC [--window SECONDS]             Agents that read the topic recently (300)

TOPIC is a topic id or a name (the newest open topic of that name, else the newest closed one).
Every command takes --json for machine-readable output.`;

/** The `topics` command group. */
export const topicsCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    json: { type: "boolean" },
    status: { type: "string" },
    limit: { type: "string" },
    messages: { type: "string" },
    reason: { type: "string" },
    new: { type: "boolean" },
    yes: { type: "boolean", short: "y" },
    window: { type: "string" },
  },
  async run({ values, positionals }, ctx) {
    const [sub, ...rest] = positionals;
    const json = values.json ?? false;
    const needArgs = (count: number, what: string): string[] => {
      if (rest.length !== count) throw new UsageError(`topics ${sub} needs ${what}`);
      return rest;
    };
    switch (sub) {
      case "list":
        return await list(ctx, {
          status: choiceOption(values.status, "status", ["open", "closed", "all"] as const, "open"),
          limit: intOption(values.limit, "limit", 200, 1),
          json,
        });
      case "show":
        return await show(
          ctx,
          needArgs(1, "a TOPIC")[0]!,
          intOption(values.messages, "messages", 10),
          json,
        );
      case "create":
        return await create(ctx, needArgs(1, "a NAME")[0]!, { fresh: values.new ?? false, json });
      case "close":
        return await close(ctx, needArgs(1, "a TOPIC")[0]!, { reason: values.reason, json });
      case "rename": {
        const [ref, name] = needArgs(2, "a TOPIC and a NEW_NAME");
        return await rename(ctx, ref!, name!, json);
      }
      case "delete":
        return await remove(ctx, needArgs(1, "a TOPIC")[0]!, { yes: values.yes ?? false, json });
      case "presence":
        return await presence(
          ctx,
          needArgs(1, "a TOPIC")[0]!,
          intOption(values.window, "window", PRESENCE_WINDOW_SECONDS, 1),
          json,
        );
      default:
        throw subcommandError("topics", sub, TOPICS_COMMANDS);
    }
  },
});

/** `topics create NAME [--new]`: reuse the open topic of that name unless `fresh`. */
async function create(
  ctx: CliContext,
  name: string,
  options: { fresh: boolean; json: boolean },
): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { topic, reused } = await createTopic(runtime.bus, {
    name,
    mode: options.fresh ? "new" : "reuse",
  });
  if (options.json) ctx.print.json({ ...topic, reused });
  else ctx.print.out(`${reused ? "Reused" : "Created"} topic "${topic.name}" (${topic.topic_id})`);
  return 0;
}

/** `topics close TOPIC [--reason]`. */
async function close(
  ctx: CliContext,
  ref: string,
  options: { reason: string | undefined; json: boolean },
): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const topic = findTopic(bus, ref);
  const { topic: closed, warnings } = await closeTopic(bus, {
    topicId: topic.topic_id,
    reason: options.reason,
  });
  if (options.json) ctx.print.json({ ...closed, warnings });
  else {
    ctx.print.out(
      warnings.length
        ? `Topic "${closed.name}" was already closed`
        : `Closed topic "${closed.name}" (${closed.topic_id})`,
    );
  }
  return 0;
}

/** `topics rename TOPIC NEW_NAME`. */
async function rename(ctx: CliContext, ref: string, name: string, json: boolean): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const { topic, previous, changed } = await renameTopic(bus, {
    topicId: findTopic(bus, ref).topic_id,
    name,
  });
  if (json) ctx.print.json({ ...topic, previous_name: previous, changed });
  else {
    ctx.print.out(
      changed
        ? `Renamed "${previous}" to "${topic.name}" (${topic.topic_id})`
        : `Topic is already named "${topic.name}"; nothing changed`,
    );
  }
  return 0;
}

/** `topics delete TOPIC --yes`: the topic and everything in it. */
async function remove(
  ctx: CliContext,
  ref: string,
  options: { yes: boolean; json: boolean },
): Promise<number> {
  if (!options.yes) {
    throw new UsageError(
      "topics delete removes the topic and all its messages; add --yes to confirm",
    );
  }
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const topic = findTopic(bus, ref);
  const deleted = await deleteTopic(bus, topic.topic_id);
  if (options.json) ctx.print.json({ topic_id: topic.topic_id, name: topic.name, deleted });
  else {
    ctx.print.out(
      `Deleted topic "${topic.name}" (${topic.topic_id}): ${
        counted(deleted.messages, "message")
      }, ` +
        `${counted(deleted.cursors, "cursor")}, ${
          counted(deleted.reservations, "reserved name")
        }, ` +
        `${counted(deleted.questions, "question")}`,
    );
  }
  return 0;
}

async function list(
  ctx: CliContext,
  options: { status: "open" | "closed" | "all"; limit: number; json: boolean },
): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const topics = topicSummaries(bus, {
    status: options.status,
    limit: Math.min(options.limit, MAX_TOPIC_LIST),
  });
  if (options.json) {
    ctx.print.json(topics);
    return 0;
  }
  if (topics.length === 0) {
    ctx.print.out(`No ${options.status === "all" ? "" : `${options.status} `}topics.`);
    return 0;
  }
  const style = ctx.print.style();
  ctx.print.out(table(
    ["TOPIC_ID", "NAME", "STATUS", "MESSAGES", "LAST ACTIVITY", "PRESENT"],
    topics.map((t) => [
      t.topic_id,
      t.name,
      t.status === "open" ? style.green("open") : style.dim("closed"),
      String(t.messages),
      ago(t.last_message_at ?? t.created_at),
      String(t.active_agents),
    ]),
  ));
  return 0;
}

async function show(
  ctx: CliContext,
  ref: string,
  count: number,
  json: boolean,
): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const summary = topicSummary(bus, findTopic(bus, ref).topic_id);
  const present = topicPresence(bus, {
    topicId: summary.topic_id,
    windowSeconds: PRESENCE_WINDOW_SECONDS,
    limit: 100,
  });
  const messages = count > 0 ? latestMessages(bus, summary.topic_id, count) : [];
  if (json) {
    ctx.print.json({ ...summary, present: present.peers, messages });
    return 0;
  }
  const style = ctx.print.style();
  const lines = [
    `${style.bold(summary.name)} (${summary.topic_id}), ${summary.status}` +
    (summary.close_reason ? `: ${summary.close_reason}` : ""),
    `Messages: ${summary.messages} (last seq ${summary.last_seq}, ${ago(summary.last_message_at)})`,
    `Present: ${
      present.peers.length
        ? present.peers.map((p) => `${p.agent_name} (${ago(p.updated_at)})`).join(", ")
        : "nobody in the last 5 minutes"
    }`,
  ];
  if (summary.metadata) lines.push(`Metadata: ${JSON.stringify(summary.metadata)}`);
  if (messages.length) {
    lines.push(
      "",
      ...messages.map((m) => renderMessageLines(m, style, { full: false })),
    );
  }
  ctx.print.out(lines.join("\n"));
  return 0;
}

async function presence(
  ctx: CliContext,
  ref: string,
  windowSeconds: number,
  json: boolean,
): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const result = topicPresence(bus, {
    topicId: findTopic(bus, ref).topic_id,
    windowSeconds,
    limit: 1000,
  });
  if (json) {
    ctx.print.json(result);
    return 0;
  }
  if (result.peers.length === 0) {
    ctx.print.out(`Nobody read this topic in the last ${windowSeconds} s.`);
    return 0;
  }
  ctx.print.out(table(
    ["AGENT", "LAST SEQ", "LAST SEEN"],
    result.peers.map((p) => [p.agent_name, String(p.last_seq), ago(p.updated_at, result.now)]),
  ));
  return 0;
}
