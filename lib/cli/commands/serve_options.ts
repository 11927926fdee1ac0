/**
 * The stdio server's options (`agent-bus [options]`): how they are parsed,
 * how the top-level help lists them, and which argument none of them takes.
 * Apart from `serve.ts`, whose modules (every profile's tools) a relay to
 * the resident bus never loads: the relay checks the arguments with this
 * before it attaches.
 *
 * @module
 */

/** The options as `parseArgs` reads them (`serve.ts`). */
export const SERVE_OPTION_TYPES = {
  profile: { type: "string" },
  role: { type: "string" },
  agent: { type: "string" },
  "server-name": { type: "string" },
  "no-drain": { type: "boolean" },
  push: { type: "string" },
  resident: { type: "boolean" },
  standalone: { type: "boolean" },
} as const;

/**
 * The first argument of `args` that a serve cannot take, or undefined: an
 * option it does not have (`--frobnicate`, `-x`) or a word (it takes none).
 * A serve given one fails on it whatever runs it, so it is not relayed to a
 * bus, which would be started for nothing. The value of a string option is
 * passed over; everything else `parseArgs` checks (a value missing, or
 * given to a flag) is left to it. Linear.
 */
export function strayServeArgument(args: readonly string[]): string | undefined {
  const types: Record<string, { type: "string" | "boolean" } | undefined> = SERVE_OPTION_TYPES;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return args[i + 1];
    if (!arg.startsWith("-") || arg === "-") return arg;
    if (!arg.startsWith("--")) {
      if (arg !== "-h") return arg;
      continue;
    }
    const equals = arg.indexOf("=");
    const name = arg.slice(2, equals < 0 ? undefined : equals);
    if (name === "help") continue;
    const option = Object.hasOwn(types, name) ? types[name] : undefined;
    if (!option) return arg;
    if (option.type === "string" && equals < 0) i++;
  }
  return undefined;
}

/** The options as the top-level help lists them. */
export const SERVE_OPTIONS_HELP = `Options (stdio server):
  --resident                Attach to this host's resident bus, starting it if none runs
                            (the default for every database but ":memory:")
  --standalone              Serve in this process, not on the resident bus (also
                            AGENT_BUS_STANDALONE=1)
  --profile peer|peerbus|mailbox|teacher|student|chatbus
                            Tool set: peer (topics, default), peerbus (bus.send, bus.broadcast,
                            bus.peers, bus.drain), mailbox (send_to_agent, check_mail),
                            teacher/student (onboarding Q&A), chatbus (AgentChatBus's
                            threads, msg_post/msg_wait, agents, reactions, edits, templates)
  --role teacher|student    Same as --profile teacher|student (default MCP_ROLE)
  --agent NAME              Mail identity of peerbus/mailbox, or who asks/answers for
                            student/teacher (default AGENT_BUS_AGENT)
  --server-name NAME        serverInfo.name reported to the client (default agent-bus)
  --no-drain                Hide bus.drain (peerbus)
  --push resources|claude-channel|none
                            How new mail is announced (default resources)`;
