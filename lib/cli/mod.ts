/**
 * Command-line entry: `agent-bus [command] [options]`.
 *
 * With no command, serve MCP on stdio (what an MCP client runs); otherwise
 * run one of the operator's commands. Exit codes: 0 ok, 1 failure, 2 usage
 * error. Arguments are parsed with Node's `util.parseArgs` (see
 * `command.ts` for why).
 *
 * @module
 */

import { DEFAULT_DB_PATH, DEFAULTS, loadConfig } from "../config.ts";
import { BusError } from "../errors.ts";
import { createLogger } from "../log.ts";
import { PACKAGE_VERSION, SPEC_VERSION } from "../version.ts";
import { type CliContext, type Command, UsageError } from "./context.ts";
import { SERVE_OPTIONS_HELP } from "./commands/serve_options.ts";
import { type CliIo, createPrinter, PROCESS_IO, ReaderGone } from "./format.ts";
import { ConfigSyntaxError } from "./install/config_error.ts";

/** A command as the dispatcher knows it: a line of help, and its module, loaded when it runs. */
interface LazyCommand {
  summary: string;
  load(): Promise<Command>;
}

/**
 * Every command, in the order the help lists them. A command's module (and
 * what it needs: the HTTP server, the config editors, ...) is loaded only
 * when it runs, so serving on stdio, what clients start, loads none of them.
 */
const COMMANDS: Record<string, LazyCommand> = {
  topics: {
    summary: "List, show, create, close, rename and delete topics; see who is present",
    load: async () => (await import("./commands/topics.ts")).topicsCommand,
  },
  watch: {
    summary: "Follow a topic live",
    load: async () => (await import("./commands/watch.ts")).watchCommand,
  },
  post: {
    summary: "Post a message to a topic as a person",
    load: async () => (await import("./commands/post.ts")).postCommand,
  },
  export: {
    summary: "Export a topic as Markdown or JSON",
    load: async () => (await import("./commands/export.ts")).exportCommand,
  },
  search: {
    summary: "Search every message (full text and semantic)",
    load: async () => (await import("./commands/search.ts")).searchCommand,
  },
  mail: {
    summary: "Send, list and drain direct mail; list running peers",
    load: async () => (await import("./commands/mail.ts")).mailCommand,
  },
  http: {
    summary: "Serve mailboxes and the peer tools over Streamable HTTP",
    load: async () => (await import("./commands/http.ts")).httpCommand,
  },
  install: {
    summary:
      "Add this server to an MCP client's config (claude-code, codex, gemini, cursor, opencode, vscode)",
    load: async () => (await import("./commands/install.ts")).installCommand,
  },
  uninstall: {
    summary: "Remove this server from an MCP client's config",
    load: async () => (await import("./commands/install.ts")).uninstallCommand,
  },
  doctor: {
    summary: "Check the setup and say how to fix what is wrong",
    load: async () => (await import("./commands/doctor.ts")).doctorCommand,
  },
  db: {
    summary: "Database statistics, vacuum, migrations, re-index and wipe",
    load: async () => (await import("./commands/db.ts")).dbCommand,
  },
  bus: {
    summary: "The resident bus agents attach to: run it, show it, stop it",
    load: async () => (await import("./commands/bus.ts")).busCommand,
  },
};

/** The top-level help text. */
export const USAGE =
  `agent-bus ${PACKAGE_VERSION} - a message bus for coding agents (MCP, spec ${SPEC_VERSION})

Usage:
  agent-bus [options]          Serve MCP on stdio (what your MCP client runs)
  agent-bus <command> [args]   Run a command (agent-bus <command> --help for its options)
  agent-bus --version | --help

Commands:
${
    Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(11)}${command.summary}`)
      .join("\n")
  }
  hook       Run by a client as a hook: tells the agent what is unread (see install --hooks)

${SERVE_OPTIONS_HELP}

Environment:
  AGENT_BUS_DB                  Database file (default ${DEFAULT_DB_PATH}; ":memory:" allowed)
  AGENT_BUS_MAX_MESSAGE_CHARS   Longest message body (default ${DEFAULTS.maxMessageChars})
  AGENT_BUS_MAX_WAIT_SECONDS    Longest wait of sync and ask (default ${DEFAULTS.maxWaitSeconds})
  AGENT_BUS_EMBEDDINGS_URL      Embedding endpoint for semantic search (default ${DEFAULTS.embeddingsUrl})
  AGENT_BUS_HTTP_TOKEN          Bearer token for HTTP (required to bind other than loopback)
  AGENT_BUS_LOG_LEVEL           debug, info, warn or error (default ${DEFAULTS.logLevel})
  NO_COLOR                      No colours in command output
See the README for the full list.`;

/**
 * Run the program.
 *
 * @param args command-line arguments (without the program name)
 * @param env the environment
 * @param options the standard streams and working directory (the process's by default; tests pass their own)
 * @returns the exit code
 */
export async function main(
  args: string[],
  env: Record<string, string | undefined>,
  options: { io?: CliIo; cwd?: string } = {},
): Promise<number> {
  // A hook speaks its client's protocol on stdin/stdout, not the CLI's.
  if (args[0] === "hook" && !options.io) {
    return await (await import("./hook/mod.ts")).main(args.slice(1), env);
  }
  const cwd = options.cwd ?? Deno.cwd();
  const { config, warnings } = loadConfig(env, { cwd });
  const io = options.io ?? PROCESS_IO;
  const ctx: CliContext = {
    config,
    configWarnings: warnings,
    log: createLogger(config.logLevel),
    env,
    cwd,
    io,
    print: createPrinter(io, config.noColor),
  };
  const first = args[0];
  if (first !== undefined && !first.startsWith("-")) {
    const entry = COMMANDS[first];
    if (!entry) return usageError(ctx, `Unknown command "${first}"`, USAGE);
    const command = await entry.load();
    if (asksForHelp(args.slice(1))) {
      ctx.print.out(command.usage);
      return 0;
    }
    return await run(ctx, () => command.run(args.slice(1), ctx), command.usage);
  }
  if (args.includes("--version") || args.includes("-V")) {
    ctx.print.out(`agent-bus ${PACKAGE_VERSION}`);
    return 0;
  }
  if (args.includes("--help") || args.includes("-h")) {
    ctx.print.out(USAGE);
    return 0;
  }
  return await run(ctx, () => serve(args, ctx), USAGE);
}

/**
 * What an MCP client starts: a relay to the host's resident bus
 * (`attach.ts`), else a server in this process.
 */
async function serve(args: string[], ctx: CliContext): Promise<number> {
  const { attachFirst } = await import("./attach.ts");
  const attached = await attachFirst(args, ctx.env, ctx.config, ctx.log, ctx.print.err);
  if ("code" in attached) return attached.code;
  const { serveFromArgs } = await import("./commands/serve.ts");
  return await serveFromArgs(args, ctx);
}

/** `--help` or `-h` among the options (not after a `--`). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  const options = end === -1 ? args : args.slice(0, end);
  return options.includes("--help") || options.includes("-h");
}

async function run(
  ctx: CliContext,
  fn: () => Promise<number> | number,
  usage: string,
): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ReaderGone) return 0;
    if (error instanceof UsageError) return usageError(ctx, error.message, usage);
    if (error instanceof BusError) {
      ctx.print.err(`${error.code}: ${error.message}`);
      return error.code === "INVALID_ARGUMENT" ? 2 : 1;
    }
    if (error instanceof ConfigSyntaxError) {
      ctx.print.err(error.message);
      return 1;
    }
    ctx.print.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

function usageError(ctx: CliContext, message: string, usage: string): number {
  ctx.print.err(`${message}\n\n${usage}`);
  return 2;
}
