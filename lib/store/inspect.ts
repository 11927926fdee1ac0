/**
 * Read-only facts about the database file and the SQLite build, for
 * `agent-bus doctor`. Nothing here creates, migrates or writes: a missing
 * file stays missing.
 *
 * @module
 */

import { directoryOf } from "../strings.ts";
import { DatabaseSync } from "node:sqlite";
import { type MigrationState, migrationState } from "./migrate.ts";
import { databaseFiles } from "./sqlite.ts";

/** What doctor learns from the file. */
export interface DatabaseFacts {
  exists: boolean;
  bytes: number;
  walBytes: number;
  /** Set when the file could be opened. */
  journalMode?: string;
  migration?: MigrationState;
  /** `PRAGMA quick_check` result (deep checks only): "ok" or the first problem. */
  quickCheck?: string;
  /** Why the file could not be read. */
  error?: string;
  /**
   * The database's files that other users may read (their mode as octal),
   * and its directory when it is agent-bus's own (`.agent_bus`) and others
   * may enter it; where modes mean something.
   */
  exposed: { path: string; mode: string }[];
}

function size(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** Look at the database file without changing it. */
export function inspectDatabaseFile(path: string, options: { deep: boolean }): DatabaseFacts {
  const facts: DatabaseFacts = {
    exists: false,
    bytes: size(path),
    walBytes: size(`${path}-wal`),
    exposed: exposedFiles(path),
  };
  try {
    Deno.statSync(path);
    facts.exists = true;
  } catch {
    return facts;
  }
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    facts.journalMode = String(Object.values(db.prepare("PRAGMA journal_mode").get() as object)[0]);
    facts.migration = migrationState(db);
    if (options.deep) {
      facts.quickCheck = String(
        Object.values(db.prepare("PRAGMA quick_check(1)").get() as object)[0],
      );
    }
  } catch (error) {
    facts.error = error instanceof Error ? error.message : String(error);
  } finally {
    db?.close();
  }
  return facts;
}

/** The database's files (and agent-bus's own directory) that users other than their owner may read. */
function exposedFiles(path: string): { path: string; mode: string }[] {
  if (Deno.build.os === "windows") return [];
  const dir = directoryOf(path);
  const ownDir = /[\\/]\.agent_bus$/.test(dir) ? [dir] : [];
  const exposed: { path: string; mode: string }[] = [];
  for (const file of [...ownDir, ...databaseFiles(path)]) {
    try {
      const mode = Deno.statSync(file).mode;
      if (mode !== null && (mode & 0o077) !== 0) {
        exposed.push({ path: file, mode: (mode & 0o777).toString(8).padStart(4, "0") });
      }
    } catch { /* absent */ }
  }
  return exposed;
}

/** The SQLite version built into this program and whether it has FTS5. */
export function sqliteFeatures(): { version: string; fts5: boolean } {
  const db = new DatabaseSync(":memory:");
  try {
    const version = String(Object.values(db.prepare("SELECT sqlite_version()").get() as object)[0]);
    let fts5 = true;
    try {
      db.exec("CREATE VIRTUAL TABLE probe USING fts5(text)");
    } catch {
      fts5 = false;
    }
    return { version, fts5 };
  } finally {
    db.close();
  }
}
