/**
 * Run `agent-bus <command>` as a real subprocess, from source, without
 * colours, and capture its output and exit code.
 *
 * @module
 */

import { MAIN } from "./peer.ts";
import type { RunResult } from "./run.ts";

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

/** Run the CLI with `args` and environment additions `env`; `stdin` is fed when given. */
export async function cli(
  args: string[],
  env: Record<string, string> = {},
  options: { stdin?: string; cwd?: string } = {},
): Promise<RunResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", MAIN, ...args],
    // `deno task test` sets INIT_CWD, which the CLI would take for the user's directory.
    env: { NO_COLOR: "1", INIT_CWD: options.cwd ?? "", DENO_DIR: await denoCacheDir(), ...env },
    cwd: options.cwd,
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
