/**
 * What `install` writes besides the server's launch (`lib/launch.ts`): the
 * shell command of each hook, and the Deno cache an entry started from
 * source needs offline.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import {
  CHECKOUT,
  ENTRY_PATH,
  HOOK_PATH,
  type Launch,
  launchFor,
  type LaunchOptions,
  MAIN_PATH,
  runsFromSource,
} from "../../launch.ts";

/** What a hook entry runs: which client's protocol, which event, and the stop options. */
export interface HookLaunch {
  client: string;
  event: string;
  /** On-call wait of a stop hook, in seconds. */
  wait?: number | undefined;
  maxBlocks?: number | undefined;
}

/** Quote one word for a POSIX shell (left bare when it is plainly safe). */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The words of a command {@linkcode hookCommand} wrote, unquoted: its
 * environment's `KEY=value` words, then the command and its arguments.
 * (It reads what `shellQuote` writes: bare words and single quotes.)
 */
export function launchOfHook(command: string): Launch {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === " ") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      const close = end < 0 ? command.length : end;
      word = (word ?? "") + command.slice(i + 1, close);
      i = close;
    } else if (c === "\\" && i + 1 < command.length) {
      word = (word ?? "") + command[++i];
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== undefined) words.push(word);
  const assignments = words.findIndex((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w));
  const at = assignments < 0 ? words.length : assignments;
  const env = Object.fromEntries(
    words.slice(0, at).map((w) => {
      const eq = w.indexOf("=");
      return [w.slice(0, eq), w.slice(eq + 1)];
    }),
  );
  return { command: words[at] ?? "", args: words.slice(at + 1), env };
}

/**
 * The shell command a client runs as a hook: `agent-bus hook <client>
 * <event> --db <database>` (from source, `hook.bundle.js <client> <event> ...`),
 * with the environment it needs written in front of it (clients such as
 * Gemini CLI run hooks with a sanitized environment) and, from source, the
 * server's permissions plus the process tree (to find the client's process
 * among the hook's ancestors) and the resident bus's socket (to ask it).
 */
export function hookCommand(
  options: Omit<LaunchOptions, "args" | "role">,
  hook: HookLaunch,
) {
  // From source the hook has its own entry; a compiled agent-bus is told the command.
  const command = runsFromSource(options.execPath) ? [] : ["hook"];
  const args = [...command, hook.client, hook.event, "--db", options.dbPath];
  if (hook.wait) args.push("--wait", String(hook.wait));
  if (hook.maxBlocks !== undefined) args.push("--max-blocks", String(hook.maxBlocks));
  const launch = launchFor({ ...options, args, entry: HOOK_PATH, role: "hook" });
  const env = Object.entries(launch.env).filter(([key]) => key !== "AGENT_BUS_DB")
    .map(([key, value]) => `${key}=${shellQuote(value)}`);
  return [...env, ...[launch.command, ...launch.args].map(shellQuote)].join(" ");
}

/** The modules a server or hook started from source may load. */
const ENTRY_MODULES = [
  MAIN_PATH,
  ENTRY_PATH,
  HOOK_PATH,
  `${CHECKOUT}/lib/store/postgres/worker.ts`,
  `${CHECKOUT}/lib/transports/stdio_worker.ts`,
  `${CHECKOUT}/lib/transports/resident/session_worker.ts`,
];

/**
 * Make sure the Deno cache that this process uses holds everything the
 * server and the hooks load (the npm packages, pinned by `deno.lock`), and
 * return where it is. Run at install time, so that the entry starts offline.
 *
 * @param execPath the Deno executable
 * @param denoDir the cache to use (`DENO_DIR`), or undefined for Deno's default
 * @throws {Error} when Deno cannot fill the cache (no network and nothing cached)
 */
export async function prepareDenoCache(execPath: string, denoDir?: string): Promise<string> {
  const run = async (args: string[]) => {
    const output = await new Deno.Command(execPath, {
      args,
      env: denoDir ? { DENO_DIR: denoDir } : {},
      cwd: fileURLToPath(new URL("../../../", import.meta.url)),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(
        `deno ${args[0]} failed: ${new TextDecoder().decode(output.stderr).trim().slice(0, 2000)}`,
      );
    }
    return new TextDecoder().decode(output.stdout);
  };
  await run(["cache", "--quiet", ...ENTRY_MODULES]);
  return (JSON.parse(await run(["info", "--json"])) as { denoDir: string }).denoDir;
}
