/**
 * How this program starts a server process: this binary when it is a
 * compiled agent-bus, otherwise `deno run` of this checkout's `main.ts` with
 * the `serve` task's own flags (narrow permissions: reading and writing the
 * database directory, reading what its workers load, `lib/` and
 * `deno.json`; the network only on loopback, or on the database server's
 * host for a `postgres://` URL). Paths are absolute, because clients start
 * servers in their own working directory, and the database location is
 * always passed so that every client uses the same bus. `install` writes it
 * into clients' configs; an entry starts the resident bus with it.
 *
 * @module
 */

import { directoryOf } from "./strings.ts";
import denoJson from "../deno.json" with { type: "json" };

/** A command to start: what an MCP client's config names. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

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
  /** Programs it may run, when run from source (`ps`: a hook's or the bus's process tree). */
  runs?: string[];
  /**
   * The entry attaches to the resident bus, which it starts when none runs:
   * from source it may run Deno for that, and reach the bus's socket.
   */
  resident?: boolean;
  /** The entry serves in its own process (`AGENT_BUS_STANDALONE=1`). */
  standalone?: boolean;
  /** It may reach the resident bus's socket (a hook asks it), without attaching. */
  reachesBus?: boolean;
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

/**
 * The resident bus's socket in the database directory `dir`: a fixed name,
 * so that an entry's permissions can name it.
 */
export function residentSocket(dir: string): string {
  return `${dir}/agent-bus.sock`;
}

/** True when `execPath` is Deno itself rather than a compiled agent-bus. */
export function runsFromSource(execPath: string): boolean {
  return /^deno(\.exe)?$/i.test(execPath.split(/[\\/]/).pop() ?? "");
}

/**
 * This checkout: `deno run` must be allowed to read what the workers it
 * starts load (`lib/`, `deno.json`). (From `import.meta.dirname`, not
 * `node:url`, which would cost every hook run the Node compatibility layer.)
 */
export const CHECKOUT = import.meta.dirname!.replace(/[\\/]lib$/, "");
const SEPARATOR = Deno.build.os === "windows" ? "\\" : "/";
/** The main module of this checkout. */
export const MAIN_PATH = `${CHECKOUT}${SEPARATOR}main.ts`;
/** The hooks' own entry point (`hook.ts`), which loads only the hook. */
export const HOOK_PATH = `${CHECKOUT}${SEPARATOR}hook.ts`;

/** How a client starts this server. */
export function launchFor(options: LaunchOptions): Launch {
  const env: Record<string, string> = { AGENT_BUS_DB: options.dbPath };
  if (options.standalone) env.AGENT_BUS_STANDALONE = "1";
  if (!runsFromSource(options.execPath)) {
    return { command: options.execPath, args: options.args, env };
  }
  const url = options.dbPath.includes("://") ? new URL(options.dbPath) : undefined;
  const dbDir = options.dbPath === ":memory:" || url ? undefined : directoryOf(options.dbPath);
  const flags = denoJson.tasks.serve.command.split(/\s+/).slice(1).flatMap((arg) => {
    if (arg === "main.ts") return [];
    if (arg.startsWith("--allow-net=") && url && !arg.split(/[=,]/).includes(url.hostname)) {
      return [`${arg},${url.hostname}`];
    }
    // An entry that attaches, or a hook, reaches the resident bus's socket.
    if (arg.startsWith("--allow-net=") && (options.resident || options.reachesBus) && dbDir) {
      return [`${arg},unix:${residentSocket(dbDir)}`];
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
  // An entry that attaches starts the bus when none runs.
  const runs = [...options.resident && dbDir ? [options.execPath] : [], ...options.runs ?? []];
  const args = [
    ...flags,
    ...cached,
    ...runs.length > 0 ? [`--allow-run=${runs.join(",")}`] : [],
    entry,
    ...options.args,
  ];
  return { command: options.execPath, args, env };
}
