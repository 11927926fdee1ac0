/**
 * Command-line entry: `agent-bus [command] [options]`.
 *
 * With no command, serve MCP on stdio (what an MCP client runs). Exit codes:
 * 0 ok, 1 failure, 2 usage error. Arguments are parsed with Node's
 * `util.parseArgs` (built into Deno, declarative, no dependency).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { DEFAULT_DB_PATH, DEFAULTS, loadConfig, type ResolvedConfig } from "../config.ts";
import { createLogger } from "../log.ts";
import { cleanMailAgent } from "../bus/mail.ts";
import { BusError } from "../errors.ts";
import type { PushMode } from "../mcp/mailbox_push.ts";
import type { ProfileName } from "../mcp/profiles.ts";
import { DEFAULT_HTTP_PORT, serveHttp } from "../transports/http/mod.ts";
import { serveStdio } from "../transports/stdio.ts";
import { PACKAGE_VERSION, SPEC_VERSION } from "../version.ts";
import { dbCommand } from "./commands/db.ts";
import { err, out } from "./format.ts";

/** The top-level help text. */
export const USAGE =
  `agent-bus ${PACKAGE_VERSION} - a message bus for coding agents (MCP, spec ${SPEC_VERSION})

Usage:
  agent-bus [options]       Serve MCP on stdio (put this in your MCP client config)
  agent-bus http [--host H] [--port P]
                            Serve mailboxes (/agents/NAME/mcp/) and the peer tools (/mcp)
                            over Streamable HTTP (default 127.0.0.1:${DEFAULT_HTTP_PORT})
  agent-bus db wipe --yes   Delete the database and its -wal/-shm files
  agent-bus --version       Print the version
  agent-bus --help          Print this help

Options (stdio):
  --profile peer|peerbus|mailbox|teacher|student
                            Tool set: peer (topics, default), peerbus (bus.send, bus.broadcast,
                            bus.peers, bus.drain), mailbox (send_to_agent, check_mail),
                            teacher/student (onboarding Q&A)
  --role teacher|student    Same as --profile teacher|student (default MCP_ROLE)
  --agent NAME              Mail identity of peerbus/mailbox, or who asks/answers for
                            student/teacher (default AGENT_BUS_AGENT)
  --server-name NAME        serverInfo.name reported to the client (default agent-bus)
  --no-drain                Hide bus.drain (peerbus)
  --push resources|claude-channel|none
                            How new mail is announced (default resources)

Environment:
  AGENT_BUS_DB                  Database file (default ${DEFAULT_DB_PATH}; ":memory:" allowed)
  AGENT_BUS_MAX_OUTBOX          Most messages per sync call (default ${DEFAULTS.maxOutbox})
  AGENT_BUS_MAX_MESSAGE_CHARS   Longest message body (default ${DEFAULTS.maxMessageChars})
  AGENT_BUS_MAX_SYNC_ITEMS      Cap of sync max_items (default ${DEFAULTS.maxSyncItems})
  AGENT_BUS_TOOL_TEXT_MAX_CHARS Message text per tool result (default ${DEFAULTS.toolTextMaxChars})
  AGENT_BUS_MAX_WAIT_SECONDS    Longest sync wait (default ${DEFAULTS.maxWaitSeconds})
  AGENT_BUS_MAX_MAILBOX_DEPTH   Most unread mail per agent (default ${DEFAULTS.maxMailboxDepth})
  AGENT_BUS_HTTP_TOKEN          Bearer token for HTTP (required to bind other than loopback)
  AGENT_BUS_LOG_LEVEL           debug, info, warn or error (default ${DEFAULTS.logLevel})
See the README for the full list.`;

const PROFILES: readonly ProfileName[] = ["peer", "peerbus", "mailbox", "teacher", "student"];
const ROLES = ["teacher", "student"] as const;
const PUSH_MODES: readonly PushMode[] = ["resources", "claude-channel", "none"];

/**
 * Run the program.
 *
 * @param args command-line arguments (without the program name)
 * @param env the environment
 * @returns the exit code
 */
export async function main(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const { config, warnings } = loadConfig(env);
  const log = createLogger(config.logLevel);
  if (args[0] === "db") {
    for (const warning of warnings) log.warn(warning.message);
    return run(() => dbCommand(args.slice(1), config));
  }
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        version: { type: "boolean", short: "V" },
        help: { type: "boolean", short: "h" },
        profile: { type: "string" },
        role: { type: "string" },
        agent: { type: "string" },
        "server-name": { type: "string" },
        "no-drain": { type: "boolean" },
        push: { type: "string" },
        host: { type: "string" },
        port: { type: "string" },
      },
    });
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.version) {
    out(`agent-bus ${PACKAGE_VERSION}`);
    return 0;
  }
  if (values.help) {
    out(USAGE);
    return 0;
  }
  const command = positionals[0];
  if (command === "http") {
    if (positionals.length > 1) return usageError(`Unexpected argument "${positionals[1]}"`);
    const port = Number(values.port ?? DEFAULT_HTTP_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return usageError(`--port must be a port number (0-65535), not "${values.port}"`);
    }
    try {
      await serveHttp({
        config,
        configWarnings: warnings,
        log,
        hostname: values.host ?? "127.0.0.1",
        port,
        onListen: (url) =>
          err(
            `agent-bus http listening on ${url} (mailboxes: ${url}/agents/NAME/mcp/, peer tools: ${url}/mcp)`,
          ),
      });
    } catch (error) {
      err(error instanceof Error ? error.message : String(error));
      return error instanceof BusError && error.code === "INVALID_ARGUMENT" ? 2 : 1;
    }
    return 0;
  }
  if (command !== undefined) return usageError(`Unknown command "${command}"`);

  const chosen = chooseProfile(values, config);
  if ("error" in chosen) return usageError(chosen.error);
  const { profile, agent } = chosen;
  const push = (values.push ?? "resources") as PushMode;
  if (!PUSH_MODES.includes(push)) {
    return usageError(`--push must be one of ${PUSH_MODES.join(", ")}`);
  }
  await serveStdio({
    profile,
    config,
    configWarnings: warnings,
    log,
    agent,
    serverName: values["server-name"]?.trim() || undefined,
    noDrain: values["no-drain"] ?? false,
    push,
  });
  return 0;
}

/**
 * The stdio profile from `--profile`, `--role` or `MCP_ROLE`, and its agent
 * name from `--agent` or `AGENT_BUS_AGENT` (required by the mail profiles,
 * optional for the roles, unused by the peer profile).
 */
function chooseProfile(
  values: { profile?: string; role?: string; agent?: string },
  config: ResolvedConfig,
): { profile: ProfileName; agent: string | undefined } | { error: string } {
  const role = values.role ?? config.role;
  if (role !== undefined && !(ROLES as readonly string[]).includes(role)) {
    return { error: `--role must be teacher or student, not "${role}"` };
  }
  if (values.profile !== undefined && values.role !== undefined && values.profile !== values.role) {
    return { error: `--profile ${values.profile} and --role ${values.role} disagree; give one` };
  }
  const profile = (values.profile ?? role ?? "peer") as ProfileName;
  if (!PROFILES.includes(profile)) {
    return { error: `--profile must be one of ${PROFILES.join(", ")}` };
  }
  if (profile === "peer") return { profile, agent: undefined };
  const agent = values.agent?.trim() || config.agent;
  if (!agent) {
    if (profile === "teacher" || profile === "student") return { profile, agent: undefined };
    return { error: `--profile ${profile} needs a name: --agent NAME or AGENT_BUS_AGENT` };
  }
  try {
    return { profile, agent: cleanMailAgent(agent, "agent") };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function usageError(message: string): number {
  err(`${message}\n\n${USAGE}`);
  return 2;
}

function run(fn: () => number): number {
  try {
    return fn();
  } catch (error) {
    err(error instanceof Error ? error.message : String(error));
    return error instanceof TypeError ? 2 : 1;
  }
}
