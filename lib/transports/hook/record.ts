/**
 * Why a hook run decided what it did, kept so that a stop let through (or
 * blocked) can be explained afterwards: one JSON line per run in
 * `hooks.log`, in the bus's directory (beside the SQLite file; `~/.agent_bus`
 * for a PostgreSQL bus). The file stays under {@linkcode MAX_RECORD_BYTES}
 * (the lines before are kept in `hooks.log.1`), is private to its owner
 * (0600) like the database, and never fails the hook: a record that cannot
 * be written is skipped. With `AGENT_BUS_LOG_LEVEL=debug` the line also goes
 * to stderr.
 *
 * @module
 */

import { directoryOf } from "../../strings.ts";
import { residenceDir } from "../../launch.ts";
import { appendCapped } from "../../log.ts";
import type { HookTrace } from "./answer.ts";

/** Size at which `hooks.log` is moved to `hooks.log.1` and started again. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** The file's name in the bus's directory. */
export const RECORD_FILE = "hooks.log";

/**
 * The directory the hook record of the database at `dbPath` goes to, with
 * `home` the user's (the configuration's `resident.home`), or undefined
 * when it has none (`:memory:`, or a database URL without a home).
 */
export function recordDir(dbPath: string, home: string | undefined): string | undefined {
  if (dbPath === ":memory:") return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(dbPath)) return home ? residenceDir(home) : undefined;
  return directoryOf(dbPath);
}

/**
 * Append `trace` of the hook process `pid` to the record in `dir` (see the
 * module's note); never throws.
 */
export function writeRecord(
  dir: string | undefined,
  trace: HookTrace,
  debug: boolean,
  pid = Deno.pid,
): void {
  const line = JSON.stringify({ at: new Date().toISOString(), pid, ...trace });
  if (debug) Deno.stderr.writeSync(new TextEncoder().encode(`agent-bus hook: ${line}\n`));
  if (dir === undefined) return;
  appendCapped(`${dir}/${RECORD_FILE}`, `${line}\n`, MAX_RECORD_BYTES);
}
