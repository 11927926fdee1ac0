/**
 * Run a program to completion and capture its output as text.
 *
 * @module
 */

/** Exit code and decoded output of a finished program. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `command` with `args` and `env` (added to a colourless environment), stdin closed. */
export async function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string } = {},
): Promise<RunResult> {
  const output = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}
