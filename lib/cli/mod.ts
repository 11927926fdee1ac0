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
import { DEFAULT_DB_PATH, DEFAULTS, loadConfig } from "../config.ts";
import { createLogger } from "../log.ts";
import { serveStdio } from "../transports/stdio.ts";
import { PACKAGE_VERSION, SPEC_VERSION } from "../version.ts";
import { dbCommand } from "./commands/db.ts";
import { err, out } from "./format.ts";

/** The top-level help text. */
export const USAGE =
  `agent-bus ${PACKAGE_VERSION} - a message bus for coding agents (MCP, spec ${SPEC_VERSION})

Usage:
  agent-bus                 Serve the MCP peer tools on stdio (put this in your MCP client config)
  agent-bus db wipe --yes   Delete the database and its -wal/-shm files
  agent-bus --version       Print the version
  agent-bus --help          Print this help

Environment:
  AGENT_BUS_DB                  Database file (default ${DEFAULT_DB_PATH}; ":memory:" allowed)
  AGENT_BUS_MAX_OUTBOX          Most messages per sync call (default ${DEFAULTS.maxOutbox})
  AGENT_BUS_MAX_MESSAGE_CHARS   Longest message body (default ${DEFAULTS.maxMessageChars})
  AGENT_BUS_MAX_SYNC_ITEMS      Cap of sync max_items (default ${DEFAULTS.maxSyncItems})
  AGENT_BUS_TOOL_TEXT_MAX_CHARS Message text per tool result (default ${DEFAULTS.toolTextMaxChars})
  AGENT_BUS_MAX_WAIT_SECONDS    Longest sync wait (default ${DEFAULTS.maxWaitSeconds})
  AGENT_BUS_LOG_LEVEL           debug, info, warn or error (default ${DEFAULTS.logLevel})
See the README for the full list.`;

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
  const command = args[0];
  if (command === "db") {
    for (const warning of warnings) log.warn(warning.message);
    return run(() => dbCommand(args.slice(1), config));
  }
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        version: { type: "boolean", short: "V" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    err(`${error instanceof Error ? error.message : error}\n\n${USAGE}`);
    return 2;
  }
  if (values.version) {
    out(`agent-bus ${PACKAGE_VERSION}`);
    return 0;
  }
  if (values.help) {
    out(USAGE);
    return 0;
  }
  await serveStdio({ profile: "peer", config, configWarnings: warnings, log });
  return 0;
}

function run(fn: () => number): number {
  try {
    return fn();
  } catch (error) {
    err(error instanceof Error ? error.message : String(error));
    return error instanceof TypeError ? 2 : 1;
  }
}
