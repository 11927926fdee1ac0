/**
 * Schema creation, version check and our forward migrations.
 *
 * Runs once per process when the store opens. The fast path (an up-to-date
 * database) only reads. Any change happens inside one `BEGIN IMMEDIATE` and
 * re-checks the state after taking the lock, because several processes may
 * open a cold database at the same instant: without the re-check, two of
 * them would both create, or both migrate.
 *
 * A database that has tables but no `meta.schema_version = "6"` is left
 * untouched and reported as a mismatch: it belongs to another program or
 * another version, and writing to it could destroy data.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { BusError } from "../errors.ts";
import { codeTerms } from "./terms.ts";
import {
  CORE_DDL,
  CORE_OBJECTS,
  EXT_MIGRATIONS,
  EXT_VERSION,
  EXT_VERSION_KEY,
  SCHEMA_VERSION,
} from "./schema.ts";

type SchemaState =
  | { kind: "empty" }
  | { kind: "mismatch"; detail: string }
  | { kind: "current" }
  | { kind: "behind" };

/**
 * Create or upgrade the schema of `db`.
 *
 * @returns the mismatch error when the database is not ours to touch
 */
export function ensureSchema(db: DatabaseSync, path: string): BusError | undefined {
  const first = inspect(db);
  if (first.kind === "current") return undefined;
  if (first.kind === "mismatch") return schemaMismatch(path, first.detail);
  db.exec("BEGIN IMMEDIATE");
  try {
    const state = inspect(db);
    if (state.kind === "mismatch") {
      db.exec("ROLLBACK");
      return schemaMismatch(path, state.detail);
    }
    if (state.kind !== "current") upgrade(db);
    db.exec("COMMIT");
    return undefined;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

/** Our migration level as stored in `meta` (0 when absent). */
export function extVersion(db: DatabaseSync): number {
  const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(EXT_VERSION_KEY) as
    | { value: string }
    | undefined;
  return row ? Number(row.value) || 0 : 0;
}

function inspect(db: DatabaseSync): SchemaState {
  const names = new Set(
    (db.prepare(
      "SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'",
    ).all() as { name: string }[]).map((row) => row.name),
  );
  if (names.size === 0) return { kind: "empty" };
  if (!names.has("meta")) return { kind: "mismatch", detail: "it has no meta table" };
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
    | { value: string | null }
    | undefined;
  if (!row) return { kind: "mismatch", detail: "meta has no schema_version" };
  if (String(row.value) !== SCHEMA_VERSION) {
    return {
      kind: "mismatch",
      detail: `schema_version is "${row.value}", this server needs "${SCHEMA_VERSION}"`,
    };
  }
  const complete = CORE_OBJECTS.every((name) => names.has(name));
  const ext = extVersion(db);
  if (ext > EXT_VERSION) {
    // A newer agent-bus migrated this file; its additions are supersets of ours.
    return complete ? { kind: "current" } : { kind: "behind" };
  }
  return complete && ext === EXT_VERSION ? { kind: "current" } : { kind: "behind" };
}

function upgrade(db: DatabaseSync): void {
  db.exec(CORE_DDL);
  db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)").run(
    SCHEMA_VERSION,
  );
  db.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('topics_version', '0')");
  const from = extVersion(db);
  db.function("bus_code_terms", { deterministic: true }, (text) => codeTerms(String(text ?? "")));
  for (const step of EXT_MIGRATIONS) {
    if (step.version <= from) continue;
    db.exec(step.sql);
  }
  if (from < EXT_VERSION) {
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(
      EXT_VERSION_KEY,
      String(EXT_VERSION),
    );
  }
}

/** The `DB_SCHEMA_MISMATCH` error, with the command that fixes it. */
export function schemaMismatch(path: string, detail: string): BusError {
  return new BusError(
    "DB_SCHEMA_MISMATCH",
    `The database at "${path}" is not an Agent Bus v6 database (${detail}). ` +
      `Wipe it with \`agent-bus db wipe --yes\` (this deletes every topic and message) ` +
      `or point AGENT_BUS_DB at another file`,
  );
}

/** Where a database stands against this build's migrations. */
export interface MigrationState {
  /** `empty` (no tables: everything will be created), `mismatch` (not ours), or `ours`. */
  kind: "empty" | "mismatch" | "ours";
  detail?: string;
  /** Our migration level stored in the file (0 when none). */
  current: number;
  /** This build's level. */
  target: number;
  /** Migrations the next open will apply, oldest first. */
  pending: { version: number; description: string }[];
}

/** Read, without changing anything, which of our migrations `db` still needs. */
export function migrationState(db: DatabaseSync): MigrationState {
  const state = inspect(db);
  const pending = (from: number) =>
    EXT_MIGRATIONS.filter((m) => m.version > from).map((m) => ({
      version: m.version,
      description: m.description,
    }));
  if (state.kind === "empty") {
    return { kind: "empty", current: 0, target: EXT_VERSION, pending: pending(0) };
  }
  if (state.kind === "mismatch") {
    return { kind: "mismatch", detail: state.detail, current: 0, target: EXT_VERSION, pending: [] };
  }
  const current = extVersion(db);
  return { kind: "ours", current, target: EXT_VERSION, pending: pending(current) };
}
