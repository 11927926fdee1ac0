/**
 * Tests that user text becomes a safe FTS5 expression, and that hostile
 * queries run against a real FTS5 table without errors.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { MAX_QUERY_TERMS, toFtsExpressions } from "../../lib/search/fts_query.ts";

Deno.test("toFtsExpressions() quotes every word and drops words with nothing to match", () => {
  assert.deepEqual(toFtsExpressions('foo-bar "baz'), {
    all: '"foo-bar" AND """baz"',
    any: '"foo-bar" OR """baz"',
    terms: ["foo-bar", '"baz'],
    broad: false,
  });
  assert.equal(toFtsExpressions("the of a")?.broad, true, "only stop words");
  assert.equal(toFtsExpressions("the cursor")?.broad, false);
  assert.equal(toFtsExpressions('  " ( ) - * ^ '), undefined);
  assert.equal(toFtsExpressions("🚀🚀"), undefined);
  assert.equal(toFtsExpressions("a ".repeat(100))?.terms.length, MAX_QUERY_TERMS);
});

Deno.test("toFtsExpressions() output never makes FTS5 fail", () => {
  const db = new DatabaseSync(":memory:");
  db.exec(
    "CREATE VIRTUAL TABLE f USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')",
  );
  db.prepare("INSERT INTO f (body) VALUES (?)").run("foo bar NOT near (parens) baz: col x");
  const hostile = [
    "foo-bar",
    '"',
    "(",
    "NOT",
    "foo NOT",
    "NEAR(foo bar)",
    "body:foo",
    "foo*",
    "^foo",
    "a AND OR b",
    "'; DROP TABLE messages; --",
    "x".repeat(10000),
    "\u0000\u0001",
    "é è ñ 漢字",
  ];
  for (const query of hostile) {
    const expr = toFtsExpressions(query);
    if (!expr) continue;
    for (const match of [expr.all, expr.any]) {
      assert.doesNotThrow(() => db.prepare("SELECT * FROM f WHERE f MATCH ?").all(match), query);
    }
  }
  const found = db.prepare("SELECT * FROM f WHERE f MATCH ?").all(
    toFtsExpressions("NOT (parens)")!.all,
  );
  assert.equal(found.length, 1, "operators are searched as words");
  db.close();
});
