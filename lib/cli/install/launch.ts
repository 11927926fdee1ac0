/**
 * The command a client should run to start this server: this binary when
 * it is a compiled agent-bus, otherwise `deno run` of this checkout's
 * `main.ts` with the `serve` task's own flags (narrow permissions on the
 * database directory, and on the PostgreSQL client's worker module; the
 * network only on loopback, or on the database server's host for a
 * `postgres://` URL). Paths are absolute, because clients start servers in
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
}

/** True when `execPath` is Deno itself rather than a compiled agent-bus. */
export function runsFromSource(execPath: string): boolean {
  return /^deno(\.exe)?$/i.test(execPath.split(/[\\/]/).pop() ?? "");
}

/** The main module of this checkout. */
export const MAIN_PATH = fileURLToPath(new URL("../../../main.ts", import.meta.url));
/** The PostgreSQL client's worker module, which `deno run` must be allowed to read. */
const WORKER_DIR = fileURLToPath(new URL("../../store/postgres", import.meta.url));

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
    const rest = arg.replace("lib/store/postgres", WORKER_DIR);
    if (dbDir) return [rest.replace("$HOME/.agent_bus", dbDir)];
    // A database URL: no file to reach, but libpq's password file may hold its password.
    const passfile = options.env.PGPASSFILE ??
      (options.env.HOME ? `${options.env.HOME}/.pgpass` : undefined);
    const without = rest.replace(/\$HOME\/\.agent_bus,?/, passfile && url ? `${passfile},` : "");
    return without.endsWith("=") ? [] : [without];
  });
  // Some clients (Codex) start servers without the user's environment: Deno needs its cache.
  if (options.env.HOME) env.HOME = options.env.HOME;
  if (options.env.DENO_DIR) env.DENO_DIR = options.env.DENO_DIR;
  return { command: options.execPath, args: [...flags, MAIN_PATH, ...options.args], env };
}
