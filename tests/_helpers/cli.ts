/**
 * Run `agent-bus <command>` and capture its output and exit code, without
 * colours: in this process through `main()` with captured streams
 * ({@linkcode cli}, for what a command prints and does), or as a real
 * subprocess from source ({@linkcode cliProcess}, for what needs one:
 * the entry point's exit code, signals).
 *
 * @module
 */

import { main } from "../../lib/cli/mod.ts";
import type { OutputStream } from "../../lib/cli/format.ts";
import { MAIN } from "./peer.ts";
import { denoCacheDir, run, type RunResult } from "./run.ts";
import { storeLocation } from "./store.ts";

/** An output stream that keeps what is written. */
class Captured implements OutputStream {
  #text = "";
  #decoder = new TextDecoder();
  writeSync(bytes: Uint8Array): number {
    this.#text += this.#decoder.decode(bytes, { stream: true });
    return bytes.length;
  }
  isTerminal(): boolean {
    return false;
  }
  text(): string {
    return this.#text + this.#decoder.decode();
  }
}

/** Run the CLI in this process with `args` and environment additions `env`; `stdin` is fed when given. */
export async function cli(
  args: string[],
  env: Record<string, string> = {},
  options: { stdin?: string; cwd?: string } = {},
): Promise<RunResult> {
  const stdout = new Captured();
  const stderr = new Captured();
  const input = new TextEncoder().encode(options.stdin ?? "");
  const stdin = {
    readable: new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(input);
        controller.close();
      },
    }),
    isTerminal: () => false,
  };
  const code = await main(args, {
    ...Deno.env.toObject(),
    NO_COLOR: "1",
    INIT_CWD: options.cwd ?? "",
    DENO_DIR: await denoCacheDir(),
    ...withStore(env),
  }, { io: { stdout, stderr, stdin }, cwd: options.cwd ?? Deno.cwd() });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** `env` with its `AGENT_BUS_DB` (a test's file path) on the store of this run. */
function withStore(env: Record<string, string>): Record<string, string> {
  return env.AGENT_BUS_DB === undefined
    ? env
    : { ...env, AGENT_BUS_DB: storeLocation(env.AGENT_BUS_DB) };
}

/** Start the CLI as a subprocess with `args` and environment additions `env`, and leave it running. */
export async function spawnCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<Deno.ChildProcess> {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", MAIN, ...args],
    env: { NO_COLOR: "1", INIT_CWD: "", DENO_DIR: await denoCacheDir(), ...withStore(env) },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** Run the CLI as a subprocess with `args` and environment additions `env`; `stdin` is fed when given. */
export async function cliProcess(
  args: string[],
  env: Record<string, string> = {},
  options: { stdin?: string; cwd?: string } = {},
): Promise<RunResult> {
  return await run(
    Deno.execPath(),
    ["run", "--quiet", "--allow-all", MAIN, ...args],
    // `deno task test` sets INIT_CWD, which the CLI would take for the user's directory.
    { INIT_CWD: options.cwd ?? "", DENO_DIR: await denoCacheDir(), ...withStore(env) },
    options,
  );
}
