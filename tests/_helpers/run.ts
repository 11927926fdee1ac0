/**
 * Run a program to completion and capture its output as text; and where
 * the programs it runs find Deno's cache.
 *
 * @module
 */

/** Exit code and decoded output of a finished program. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Run `command` with `args` and `env` (added to a colourless environment);
 * `stdin` is written to the program and closed when given, else stdin is closed.
 */
export async function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string; stdin?: string } = {},
): Promise<RunResult> {
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...env },
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

let denoDir: Promise<string> | undefined;

/**
 * Deno's cache directory. Tests that move HOME must pass it on, or the
 * child would start from an empty cache and download every dependency.
 */
export function denoCacheDir(): Promise<string> {
  denoDir ??= new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  })
    .output().then((out) =>
      (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir
    );
  return denoDir;
}
