/**
 * How this program starts a server process: this binary when it is a
 * compiled agent-bus, otherwise `deno run` of this checkout's `main.ts`
 * (`entry.ts` for an MCP entry, `hook.ts` bundled for a hook) with the `serve`
 * task's own flags (narrow permissions: reading and writing the
 * database directory, reading what its workers load, `lib/` and
 * `deno.json`; the network only on loopback, or on the database server's
 * host for a `postgres://` URL). Paths are absolute, because clients start
 * servers in their own working directory, and the database location is
 * always passed so that every client uses the same bus. `install` writes it
 * into clients' configs; an entry starts the resident bus with it.
 *
 * @module
 */

import { DEFAULT_DB_PATH } from "./config.ts";
import { directoryOf, fnv1a64 } from "./strings.ts";
import denoJson from "../deno.json" with { type: "json" };

/** A command to start: what an MCP client's config names. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * What a launched process is: an MCP `entry` that attaches to the resident
 * bus (from source it may run Deno, to start the bus when none runs, and
 * reach the bus's socket); a `standalone` entry (`AGENT_BUS_STANDALONE=1`),
 * serving in its own process; the resident `bus` itself; or a `hook`, which
 * asks the bus. The bus and hooks read the process tree with `ps` (a
 * hook's client is one of its ancestors; Deno lets only a program with
 * every permission read `/proc`).
 */
export type LaunchRole = "entry" | "standalone" | "bus" | "hook";

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
  /** What the started process is (default `entry`); from source, it sets the permissions. */
  role?: LaunchRole;
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
 * Where the resident bus of `dbPath` listens, in `dir` (see
 * {@linkcode residenceDir}): beside a SQLite file, `agent-bus.sock` for the
 * default database (`agent_bus.sqlite`) and a name made from the file's
 * name for any other, so that two databases of one directory have a bus
 * each; for a database URL, a name made from the URL without its password.
 * Names an entry's permissions can say.
 */
export function residentSocket(dir: string, dbPath: string): string {
  return `${dir}/${residentName(dbPath)}.sock`;
}

/**
 * The directory of the resident bus of a database URL, whose database has
 * none on this host: the user's `~/.agent_bus` (the default database's).
 */
export function residenceDir(home: string): string {
  return `${home}/.agent_bus`;
}

/** The default database's file name (`DEFAULT_DB_PATH`'s). */
const DEFAULT_DB_FILE = DEFAULT_DB_PATH.slice(DEFAULT_DB_PATH.lastIndexOf("/") + 1);

function residentName(dbPath: string): string {
  if (!dbPath.includes("://")) {
    const file = dbPath.slice(Math.max(dbPath.lastIndexOf("/"), dbPath.lastIndexOf("\\")) + 1);
    return file === DEFAULT_DB_FILE ? "agent-bus" : `agent-bus-${fnv1a64(file)}`;
  }
  const url = new URL(dbPath);
  url.password = "";
  return `agent-bus-${fnv1a64(url.href)}`;
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
/** This checkout as a URL, for `import()` (the same from `lib/` and from a bundle there). */
export const CHECKOUT_URL = new URL("../", import.meta.url);
const SEPARATOR = Deno.build.os === "windows" ? "\\" : "/";
/** The main module of this checkout. */
export const MAIN_PATH = `${CHECKOUT}${SEPARATOR}main.ts`;
/**
 * What hooks run from source: `hook.ts`, which loads only the hook, bundled
 * into one module (`deno task bundle`; `scripts/bundle.ts` says why).
 */
export const HOOK_PATH = ["lib", "cli", "hook", "hook.bundle.js"].reduce(
  (path, name) => `${path}${SEPARATOR}${name}`,
  CHECKOUT,
);
/**
 * What an MCP client starts from source: `entry.ts`, which loads only the
 * relay to the resident bus, bundled into one module (`deno task bundle`).
 */
export const ENTRY_PATH = `${CHECKOUT}${SEPARATOR}lib${SEPARATOR}entry.bundle.js`;

/** The script of this checkout's that `args` run (`main.ts`, an entry's, the hook's), if any. */
export function scriptOf(args: string[]): string | undefined {
  return args.find((arg) =>
    /(^|[\\/])(main\.ts|entry\.ts|entry\.bundle\.js|hook\.bundle\.js)$/.test(arg)
  );
}

/**
 * What stands in for this checkout's `deno.json` on a hook's command line:
 * its import map and unstable features, named, so that Deno neither looks
 * for the file and reads it as a config nor reads its lock file (1–2 ms of
 * a 22 ms hook run, `hyperfine`). The lock is not needed: what a hook can
 * load names its packages at exact versions that depend on nothing
 * (`tests/cli/bundles_test.ts` checks that). An entry keeps the config: a
 * session the bus cannot serve loads the whole program, whose packages'
 * own dependencies the lock pins.
 */
function hookConfigFlags(): string[] {
  return [
    "--no-config",
    `--import-map=${CHECKOUT}${SEPARATOR}deno.json`,
    ...denoJson.unstable.map((feature) => `--unstable-${feature}`),
  ];
}

/**
 * A hook runs one small bundle from start to exit: `--no-lazy` compiles all
 * of it up front, so that Deno's code cache holds every function; lazily,
 * V8 compiles each one the first time it runs, at every run (a hook run
 * 23.5 → 22.2–22.8 ms mean, `hyperfine`). Not for an entry: a session it
 * serves itself loads the whole program, which would take 4 MB more.
 */
const HOOK_V8_FLAGS = "--v8-flags=--no-lazy";

/** How a client starts this server. */
export function launchFor(options: LaunchOptions): Launch {
  const role = options.role ?? "entry";
  const env: Record<string, string> = { AGENT_BUS_DB: options.dbPath };
  if (role === "standalone") env.AGENT_BUS_STANDALONE = "1";
  if (!runsFromSource(options.execPath)) {
    return { command: options.execPath, args: options.args, env };
  }
  const url = options.dbPath.includes("://") ? new URL(options.dbPath) : undefined;
  const dbDir = options.dbPath === ":memory:" || url ? undefined : directoryOf(options.dbPath);
  // Every role but a standalone entry reaches the resident bus: its socket, and the directory
  // where it and its starters' lock are (beside the file; for a URL, the user's ~/.agent_bus).
  const home = options.env.HOME;
  const busDir = role === "standalone"
    ? undefined
    : dbDir ?? (url && home ? residenceDir(home) : undefined);
  const readsProcesses = role === "bus" || role === "hook";
  // A database URL: libpq's password file may hold its password.
  const passfile = url && (options.env.PGPASSFILE ?? (home ? `${home}/.pgpass` : undefined));
  const flags = denoJson.tasks.serve.command.split(/\s+/).slice(1).flatMap((arg) => {
    if (arg === "main.ts" || !arg.startsWith("--allow-")) return arg === "main.ts" ? [] : [arg];
    // What a role may run, and the socket it reaches, are its own (below), not the task's.
    if (arg === "--allow-run") return [];
    const [name, list] = arg.split("=", 2) as [string, string | undefined];
    if (list === undefined) return [arg];
    const values = list.split(",").flatMap((value) => {
      if (value.startsWith("unix:")) return [];
      if (value === "lib" || value === "deno.json") return [`${CHECKOUT}/${value}`];
      if (value !== "$HOME/.agent_bus") return [value];
      const dir = busDir ?? dbDir;
      const dirs = dir ? [dir] : [];
      return name === "--allow-read" && passfile ? [passfile, ...dirs] : dirs;
    });
    if (name === "--allow-net" && url && !values.includes(url.hostname)) values.push(url.hostname);
    if (name === "--allow-net" && busDir) {
      values.push(`unix:${residentSocket(busDir, options.dbPath)}`);
    }
    return values.length > 0 ? [`${name}=${values.join(",")}`] : [];
  });
  // Some clients (Codex) start servers without the user's environment: Deno needs its cache.
  if (options.env.HOME) env.HOME = options.env.HOME;
  const denoDir = options.denoDir ?? options.env.DENO_DIR;
  if (denoDir) env.DENO_DIR = denoDir;
  const entry = options.entry ?? (role === "entry" ? ENTRY_PATH : MAIN_PATH);
  const cached = options.denoDir ? ["--cached-only"] : [];
  // An entry that attaches starts the bus when none runs.
  const runs = [
    ...role === "entry" && busDir ? [options.execPath] : [],
    ...readsProcesses ? ["ps"] : [],
  ];
  const [run, ...serveFlags] = flags;
  const args = [
    run!,
    ...role === "hook" ? [...hookConfigFlags(), HOOK_V8_FLAGS] : [],
    ...serveFlags,
    ...cached,
    ...runs.length > 0 ? [`--allow-run=${runs.join(",")}`] : [],
    entry,
    ...options.args,
  ];
  return { command: options.execPath, args, env };
}
