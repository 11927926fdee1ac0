/**
 * Our SQLite statements, said in PostgreSQL.
 *
 * The store modules write each statement once, in SQLite's dialect; the
 * PostgreSQL engine translates it once (the result is cached with the
 * statement). Only the differences our statements use are handled, each a
 * rewrite that cannot change what the statement means:
 *
 * - `?` and `?N` placeholders become `$N`;
 * - `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`, and `INSERT OR
 *   REPLACE` an upsert on the table's primary key ({@linkcode PRIMARY_KEYS});
 * - the scalar `MAX(a, b, …)` / `MIN(a, b, …)` become `GREATEST` / `LEAST`;
 * - `IS ?` (SQLite's null-safe equality) becomes `IS NOT DISTINCT FROM ?`;
 * - `json_each(?)` becomes `json_array_elements_text(?)`, `instr` becomes
 *   `strpos`, `length(CAST(x AS BLOB))` becomes `octet_length(x)`.
 *
 * Tables keep SQLite's `rowid` as a real column in the PostgreSQL schema, so
 * statements that order or page by it need no rewrite. A statement whose
 * meaning differs more (full-text search, pragmas) has its own PostgreSQL
 * text in the store module, chosen by `store.engine`.
 *
 * Input bounds: only our own SQL text reaches this module, never user
 * input; each rewrite is one forward scan.
 *
 * @module
 */

/** Primary-key columns of the tables that `INSERT OR REPLACE` writes. */
const PRIMARY_KEYS: Record<string, string[]> = {
  bus_threads: ["topic_id"],
  bus_refresh_requests: ["topic_id", "agent_id"],
  bus_chat_waits: ["topic_id", "agent_id"],
  bus_typing: ["topic_id", "agent_name"],
  bus_templates: ["id"],
  bus_chunks: ["message_id", "model", "chunk"],
  meta: ["key"],
};

/**
 * `sql` (SQLite) in PostgreSQL's dialect.
 *
 * @throws {Error} for an `INSERT OR REPLACE` into a table without a known key
 */
export function toPostgres(sql: string): string {
  let text = placeholders(sql);
  text = scalarMinMax(text);
  text = text.replaceAll(
    /json_each\((\$\d+)\)/g,
    "json_array_elements_text(CAST($1 AS text)::json)",
  )
    .replaceAll(/\bIS (\$\d+)/g, "IS NOT DISTINCT FROM $1")
    .replaceAll(/\binstr\(/g, "strpos(")
    .replaceAll(/length\(CAST\((\w+) AS BLOB\)\)/g, "octet_length($1)");
  if (/^\s*INSERT OR IGNORE INTO/i.test(text)) {
    text = appendConflict(text.replace(/INSERT OR IGNORE INTO/i, "INSERT INTO"), "DO NOTHING");
  } else if (/^\s*INSERT OR REPLACE INTO/i.test(text)) {
    text = replaceToUpsert(text.replace(/INSERT OR REPLACE INTO/i, "INSERT INTO"));
  }
  return text;
}

/** `?` → `$1, $2, …` in order; `?N` → `$N`. Skips quoted strings. */
function placeholders(sql: string): string {
  let out = "";
  let next = 1;
  let quoted = false;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'") quoted = !quoted;
    if (c !== "?" || quoted) {
      out += c;
      continue;
    }
    let j = i + 1;
    while (j < sql.length && sql[j]! >= "0" && sql[j]! <= "9") j++;
    out += j > i + 1 ? `$${sql.slice(i + 1, j)}` : `$${next++}`;
    i = j - 1;
  }
  return out;
}

/** `MAX(a, b)` → `GREATEST(a, b)` (and `MIN` → `LEAST`) where the call has several arguments. */
function scalarMinMax(sql: string): string {
  let out = "";
  let i = 0;
  const pattern = /\b(MAX|MIN)\(/gi;
  for (let match = pattern.exec(sql); match; match = pattern.exec(sql)) {
    const open = match.index + match[0].length - 1;
    const close = matchingParen(sql, open);
    if (close < 0 || !hasTopLevelComma(sql, open + 1, close)) continue;
    const name = match[1]!.toUpperCase() === "MAX" ? "GREATEST" : "LEAST";
    out += sql.slice(i, match.index) + name;
    i = open;
  }
  return out + sql.slice(i);
}

function matchingParen(sql: string, open: number): number {
  let depth = 0;
  for (let i = open; i < sql.length; i++) {
    if (sql[i] === "(") depth++;
    else if (sql[i] === ")" && --depth === 0) return i;
  }
  return -1;
}

function hasTopLevelComma(sql: string, from: number, to: number): boolean {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = sql[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) return true;
  }
  return false;
}

/** Put `ON CONFLICT <action>` before a trailing `RETURNING`, or at the end. */
function appendConflict(sql: string, action: string): string {
  const returning = sql.search(/\bRETURNING\b/i);
  const clause = ` ON CONFLICT ${action}`;
  return returning < 0
    ? sql.trimEnd() + clause
    : `${sql.slice(0, returning).trimEnd()}${clause} ${sql.slice(returning)}`;
}

function replaceToUpsert(sql: string): string {
  const head = /^\s*INSERT INTO (\w+)\s*\(([^)]*)\)/i.exec(sql);
  const table = head?.[1];
  const keys = table === undefined ? undefined : PRIMARY_KEYS[table];
  if (!head || !keys) throw new Error(`No primary key known for: ${sql.slice(0, 80)}`);
  const columns = head[2]!.split(",").map((c) => c.trim());
  const updates = columns.filter((c) => !keys.includes(c)).map((c) => `${c} = excluded.${c}`);
  const action = updates.length === 0
    ? `(${keys.join(", ")}) DO NOTHING`
    : `(${keys.join(", ")}) DO UPDATE SET ${updates.join(", ")}`;
  return appendConflict(sql, action);
}
