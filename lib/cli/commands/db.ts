/**
 * `agent-bus db wipe --yes`: delete the database and its WAL files.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { ResolvedConfig } from "../../config.ts";
import { wipeDatabase } from "../../store/mod.ts";
import { err, out } from "../format.ts";

/** Usage of the `db` command group. */
export const DB_USAGE = `Usage: agent-bus db wipe [--yes]

  wipe    Delete the database file (AGENT_BUS_DB) and its -wal/-shm files.
          Every topic and message is lost. Asks first unless --yes is given.`;

/**
 * Run `agent-bus db ...`.
 *
 * @returns the exit code (0 ok, 1 failure, 2 usage)
 */
export function dbCommand(args: string[], config: ResolvedConfig): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { yes: { type: "boolean", short: "y" }, help: { type: "boolean", short: "h" } },
  });
  const sub = positionals[0];
  if (values.help || sub === undefined) {
    out(DB_USAGE);
    return sub === undefined && !values.help ? 2 : 0;
  }
  if (sub !== "wipe") {
    err(`Unknown db command "${sub}"\n\n${DB_USAGE}`);
    return 2;
  }
  if (config.dbPath === ":memory:") {
    out("The database is :memory:; there is nothing to wipe.");
    return 0;
  }
  if (!values.yes) {
    if (!Deno.stdin.isTerminal()) {
      err(`Refusing to wipe "${config.dbPath}" without --yes`);
      return 2;
    }
    const answer = prompt(`Delete "${config.dbPath}" and every message in it? Type "yes":`);
    if (answer?.trim().toLowerCase() !== "yes") {
      err("Nothing was deleted.");
      return 1;
    }
  }
  const removed = wipeDatabase(config.dbPath);
  out(
    removed.length === 0
      ? `No database at "${config.dbPath}"; nothing to wipe.`
      : `Wiped "${config.dbPath}" (${removed.length} file(s) removed).`,
  );
  return 0;
}
