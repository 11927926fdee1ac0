/**
 * Which store the tests run on. `deno task test` runs the suite on SQLite
 * files, then runs the store-independent suites again with
 * `AGENT_BUS_TEST_STORE=postgres` against a throwaway cluster it started
 * (`AGENT_BUS_TEST_PG_URL`, see `scripts/test.ts`). Helpers pass every
 * database path through {@linkcode storeLocation}: on PostgreSQL a path
 * becomes a database of its own, so each test keeps its own bus and two
 * processes given one path share one bus, exactly as with files.
 *
 * A test that only makes sense on one store says so with
 * {@linkcode sqliteTest} and why.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import postgres from "postgres";
import { WRITE_LOCK } from "../../lib/store/postgres/locks.ts";

/** The store of this run. */
export const TEST_STORE: "sqlite" | "postgres" = Deno.env.get("AGENT_BUS_TEST_STORE") === "postgres"
  ? "postgres"
  : "sqlite";

const created = new Set<string>();

/**
 * The `AGENT_BUS_DB` for a test's database `path`: the path itself on
 * SQLite; on PostgreSQL the URL of a database named after the path (created
 * on first use).
 */
export function storeLocation(path: string): string {
  if (TEST_STORE === "sqlite" || path === ":memory:" || path.includes("://")) return path;
  const base = Deno.env.get("AGENT_BUS_TEST_PG_URL");
  if (!base) throw new Error("AGENT_BUS_TEST_STORE=postgres needs AGENT_BUS_TEST_PG_URL");
  const url = new URL(base);
  const name = `t_${fnv1a(path)}`;
  if (!created.has(name)) {
    const bin = Deno.env.get("AGENT_BUS_TEST_PG_BIN") ?? "createdb";
    const output = new Deno.Command(bin, {
      args: ["-h", url.hostname, "-p", url.port, "-U", decodeURIComponent(url.username), name],
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    const error = new TextDecoder().decode(output.stderr);
    if (!output.success && !error.includes("already exists")) throw new Error(error);
    created.add(name);
  }
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Register a test of something only the SQLite engine has (its file, its
 * pragmas, its file-system wake-ups, files shared with the original
 * program); the PostgreSQL run lists it as ignored, saying `why`.
 */
export function sqliteTest(name: string, why: string, fn: () => Promise<void>): void {
  const postgres = TEST_STORE === "postgres";
  Deno.test({ name: postgres ? `${name} (SQLite only: ${why})` : name, ignore: postgres, fn });
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  let second = 0x2f1d5a3b;
  for (let i = text.length - 1; i >= 0; i--) {
    second ^= text.charCodeAt(i);
    second = Math.imul(second, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0") + second.toString(16).padStart(8, "0");
}

/**
 * Another program holding the bus's write lock on the database of `path`
 * until the returned function is called: SQLite's `BEGIN IMMEDIATE`, or
 * PostgreSQL's advisory lock in an open transaction.
 */
export async function holdWriteLock(path: string): Promise<() => Promise<void>> {
  if (TEST_STORE === "sqlite") {
    const holder = new DatabaseSync(path);
    holder.exec("BEGIN IMMEDIATE");
    return () => {
      holder.exec("ROLLBACK");
      holder.close();
      return Promise.resolve();
    };
  }
  const sql = postgres(storeLocation(path), { max: 1, onnotice: () => {} });
  const reserved = await sql.reserve();
  await reserved`BEGIN`;
  await reserved`SELECT pg_advisory_xact_lock(${WRITE_LOCK})`;
  return async () => {
    await reserved`ROLLBACK`;
    reserved.release();
    await sql.end();
  };
}

/**
 * Run `statement` (SQL both engines take; `?` parameters) on the database of
 * `path` from outside the bus, as another program would.
 */
export async function execSql(path: string, statement: string, ...params: (string | number)[]) {
  if (TEST_STORE === "sqlite") {
    const db = new DatabaseSync(path);
    try {
      db.prepare(statement).run(...params);
    } finally {
      db.close();
    }
    return;
  }
  const sql = postgres(storeLocation(path), { max: 1, onnotice: () => {} });
  let n = 0;
  try {
    await sql.unsafe(statement.replaceAll("?", () => `$${++n}`), params);
  } finally {
    await sql.end();
  }
}

/** Rows of a read-only `query` (no parameters) on the database of `path`, on either store. */
export async function readRows(path: string, query: string): Promise<Record<string, unknown>[]> {
  if (TEST_STORE === "sqlite") {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return db.prepare(query).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const sql = postgres(storeLocation(path), { max: 1, onnotice: () => {} });
  try {
    return [...await sql.unsafe(query)];
  } finally {
    await sql.end();
  }
}
