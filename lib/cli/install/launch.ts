/**
 * The command a client should run to start this server: this binary when
 * it is a compiled agent-bus, otherwise `deno run` of this checkout's
 * `main.ts` with the `serve` task's own flags (narrow permissions: reading
 * and writing the database directory, reading what its workers load,
 * `lib/` and `deno.json`; the network only on loopback, or on the database
 * server's host for a `postgres://` URL). Paths are absolute, because clients start servers in
 * their own working directory, and the database location is always passed
 * so that every client uses the same bus.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import denoJson from "../../../deno.json" with { type: "json" };
import type { Launch } from "./clients.ts";

/** Where the server should run from. */
export interface LaunchOptions {
  /** The running executable (`Deno.execPath()`). */
  execPath: string;
  /** Absolute database path. */
  dbPath: string;
  /** Arguments after the program (`--role teacher`, …). */
  args: string[];
  /** The environment, for HOME and DENO_DIR when run from source. */
  env: Record<string, string | undefined>;
  /** More `deno run` flags, when run from source (the hook's `--allow-run=ps`). */
  denoFlags?: string[];
  /** The module run from source (default `main.ts`). */
  entry?: string;
  /**
   * The Deno cache that holds this checkout's packages (see
   * {@linkcode prepareDenoCache}): written into the entry, with
   * `--cached-only`, so that the server starts offline whatever HOME the
   * client gives it.
   */
  denoDir?: string;
}

/** True when `execPath` is Deno itself rather than a compiled agent-bus. */
export function runsFromSource(execPath: string): boolean {
  return /^deno(\.exe)?$/i.test(execPath.split(/[\\/]/).pop() ?? "");
}

/** The main module of this checkout. */
export const MAIN_PATH = fileURLToPath(new URL("../../../main.ts", import.meta.url));
/** The hooks' own entry point (`hook.ts`), which loads only the hook. */
export const HOOK_PATH = fileURLToPath(new URL("../../../hook.ts", import.meta.url));
/** This checkout: `deno run` must be allowed to read what the workers it starts load (`lib/`, `deno.json`). */
const CHECKOUT = fileURLToPath(new URL("../../..", import.meta.url)).replace(/[\\/]$/, "");

/** How a client starts this server. */
export function launchFor(options: LaunchOptions): Launch {
  const env: Record<string, string> = { AGENT_BUS_DB: options.dbPath };
  if (!runsFromSource(options.execPath)) {
    return { command: options.execPath, args: options.args, env };
  }
  const url = options.dbPath.includes("://") ? new URL(options.dbPath) : undefined;
  const dbDir = options.dbPath === ":memory:" || url
    ? undefined
    : options.dbPath.replace(/[\\/][^\\/]*$/, "") || "/";
  const flags = denoJson.tasks.serve.command.split(/\s+/).slice(1).flatMap((arg) => {
    if (arg === "main.ts") return [];
    if (arg.startsWith("--allow-net=") && url && !arg.split(/[=,]/).includes(url.hostname)) {
      return [`${arg},${url.hostname}`];
    }
    if (!arg.includes("$HOME/.agent_bus")) return [arg];
    const rest = arg.replace(/(?<=[=,])(?=(?:lib|deno\.json)(?:,|$))/g, `${CHECKOUT}/`);
    if (dbDir) return [rest.replace("$HOME/.agent_bus", dbDir)];
    // A database URL: no file to reach, but libpq's password file may hold its password.
    const passfile = options.env.PGPASSFILE ??
      (options.env.HOME ? `${options.env.HOME}/.pgpass` : undefined);
    const readable = arg.startsWith("--allow-read=") && passfile && url ? `${passfile},` : "";
    const without = rest.replace(/\$HOME\/\.agent_bus,?/, readable);
    return without.endsWith("=") ? [] : [without];
  });
  // Some clients (Codex) start servers without the user's environment: Deno needs its cache.
  if (options.env.HOME) env.HOME = options.env.HOME;
  const denoDir = options.denoDir ?? options.env.DENO_DIR;
  if (denoDir) env.DENO_DIR = denoDir;
  const entry = options.entry ?? MAIN_PATH;
  const cached = options.denoDir ? ["--cached-only"] : [];
  const args = [...flags, ...cached, ...(options.denoFlags ?? []), entry, ...options.args];
  return { command: options.execPath, args, env };
}

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
 * The shell command a client runs as a hook: `agent-bus hook <client>
 * <event> --db <database>` (from source, `hook.ts <client> <event> ...`), with the environment it needs written in front
 * of it (clients such as Gemini CLI run hooks with a sanitized environment)
 * and, from source, the server's permissions plus `ps` (to find the
 * client's process among the hook's ancestors).
 */
export function hookCommand(options: Omit<LaunchOptions, "args" | "denoFlags">, hook: HookLaunch) {
  // From source the hook has its own entry; a compiled agent-bus is told the command.
  const command = runsFromSource(options.execPath) ? [] : ["hook"];
  const args = [...command, hook.client, hook.event, "--db", options.dbPath];
  if (hook.wait) args.push("--wait", String(hook.wait));
  if (hook.maxBlocks !== undefined) args.push("--max-blocks", String(hook.maxBlocks));
  const launch = launchFor({ ...options, args, entry: HOOK_PATH, denoFlags: ["--allow-run=ps"] });
  const env = Object.entries(launch.env).filter(([key]) => key !== "AGENT_BUS_DB")
    .map(([key, value]) => `${key}=${shellQuote(value)}`);
  return [...env, ...[launch.command, ...launch.args].map(shellQuote)].join(" ");
}

/** The modules a server or hook started from source may load. */
const ENTRY_MODULES = [
  MAIN_PATH,
  HOOK_PATH,
  `${CHECKOUT}/lib/store/postgres/worker.ts`,
  `${CHECKOUT}/lib/transports/stdio_worker.ts`,
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
