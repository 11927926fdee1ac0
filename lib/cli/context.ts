/**
 * What every CLI command is and what it gets, with the error a command
 * raises when it was called wrongly: apart from the argument parser
 * (`command.ts`), so that what an MCP client starts loads neither it nor
 * the database.
 *
 * @module
 */

import type { ConfigWarning, ResolvedConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { CliIo, Printer } from "./format.ts";

/** Everything a command may use. */
export interface CliContext {
  config: ResolvedConfig;
  configWarnings: ConfigWarning[];
  log: Logger;
  /** The environment (for commands that hand it on, like `install`). */
  env: Record<string, string | undefined>;
  /** The working directory the program runs in. */
  cwd: string;
  /** The standard streams (the process's, or a test's). */
  io: CliIo;
  /** Output to {@linkcode CliIo}'s stdout and stderr. */
  print: Printer;
}

/** One `agent-bus <name>` command. */
export interface Command {
  /** The command's own `--help`. */
  usage: string;
  run(args: string[], ctx: CliContext): Promise<number> | number;
}

/** A mistake in how the command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
