/**
 * How a CLI command's arguments are parsed: Node's `util.parseArgs`
 * (built into Deno: declarative, strict about unknown options, no
 * dependency to download or audit; the commands need nothing it lacks),
 * and the runtime a command opens.
 *
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { openRuntime, type Runtime } from "../runtime.ts";
import { type CliContext, type Command, UsageError } from "./context.ts";

export { type CliContext, type Command, UsageError } from "./context.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Parse `args` strictly against `options` (plus `--help`).
 *
 * @throws {UsageError} on an unknown option or a missing value
 */
export function parseCommand<const O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: { ...options, help: { type: "boolean", short: "h" } } as O & {
        help: { type: "boolean"; short: "h" };
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** What {@linkcode parseCommand} returns for `options`. */
export type ParsedCommand<O extends Options> = ReturnType<typeof parseCommand<O>>;

/**
 * A command whose arguments are parsed strictly against `options` before
 * `run` sees them (`--help` is answered by the dispatcher).
 */
export function defineCommand<const O extends Options>(spec: {
  usage: string;
  options: O;
  run(parsed: ParsedCommand<O>, ctx: CliContext): Promise<number> | number;
}): Command {
  return {
    usage: spec.usage,
    run: (args, ctx) => spec.run(parseCommand(args, spec.options), ctx),
  };
}

/** An integer option from `min` to `max`, or `fallback` when absent. */
export function intOption(
  value: string | undefined,
  name: string,
  fallback: number,
  min = 0,
  max = Infinity,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    const range = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`--${name} must be an integer ${range}, not "${value}"`);
  }
  return n;
}

/** One of `choices`, or `fallback` when absent. */
export function choiceOption<const C extends readonly string[]>(
  value: string | undefined,
  name: string,
  choices: C,
  fallback: C[number],
): C[number] {
  if (value === undefined) return fallback;
  if (!choices.includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(", ")}`);
  }
  return value;
}

/**
 * The usage error of a command group (`topics`, `db`, …) given no command,
 * or one it does not have; either way it names the ones it has.
 */
export function subcommandError(
  group: string,
  given: string | undefined,
  commands: readonly string[],
): UsageError {
  const names = `${commands.slice(0, -1).join(", ")} or ${commands.at(-1)}`;
  return new UsageError(
    given === undefined
      ? `${group} needs a command: ${names}`
      : `Unknown ${group} command "${given}": it has ${names}`,
  );
}

/** Open the database for a command (no background indexing); dispose to close it. */
export function openCliRuntime(ctx: CliContext): Runtime {
  return openRuntime(ctx.config, { log: ctx.log, configWarnings: ctx.configWarnings });
}

/**
 * The directory the user ran the command in. Under `deno task` the process
 * runs in the project's folder, and Deno passes the caller's in INIT_CWD.
 */
export function userCwd(ctx: CliContext): string {
  return ctx.env.INIT_CWD || ctx.cwd;
}

/** `path` made absolute against {@linkcode userCwd}. */
export function userPath(ctx: CliContext, path: string): string {
  return /^([\\/]|[A-Za-z]:[\\/])/.test(path) ? path : `${userCwd(ctx)}/${path}`;
}
