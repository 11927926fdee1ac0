/**
 * Tests of how the SQLite engine prepares statements
 * (`lib/store/sqlite.ts`): a `LIMIT` given as a parameter is compiled once,
 * as an expression (SQLite would prepare the statement again at every run),
 * and limits as it did.
 */

import assert from "node:assert/strict";
import { createLogger } from "../../lib/log.ts";
import { limitsAsExpressions, openSqliteStore } from "../../lib/store/sqlite.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("a LIMIT given as a parameter is prepared as an expression, and limits as before", async () => {
  await using tmp = await tmpDir();
  const store = openSqliteStore(`${tmp.path}/bus.sqlite`, {
    busyTimeoutMs: 5000,
    log: createLogger("error"),
  });
  try {
    await store.immediate(() => {
      for (let i = 0; i < 5; i++) store.stmt("INSERT INTO meta VALUES (?, ?)").run(`k${i}`, `${i}`);
    });
    const [plain, numbered] = store.read(() => {
      const plain = store.stmt("SELECT key FROM meta WHERE key LIKE 'k%' ORDER BY key LIMIT ?");
      const numbered = store.stmt(
        "SELECT key FROM meta WHERE key LIKE ?1 ORDER BY key DESC LIMIT ?2",
      );
      assert.match(plain.sourceSQL, /LIMIT \+\?$/);
      assert.match(numbered.sourceSQL, /LIMIT \+\?2$/);
      return [plain.all(2), numbered.all("k%", 3)];
    });
    assert.deepEqual(plain.map((row) => row.key), ["k0", "k1"]);
    assert.deepEqual(numbered.map((row) => row.key), ["k4", "k3", "k2"]);
  } finally {
    store.close();
  }
});

Deno.test("only a LIMIT that is a bare parameter is rewritten", () => {
  assert.equal(
    limitsAsExpressions("SELECT * FROM (SELECT * FROM t LIMIT ?) AS a LIMIT 10"),
    "SELECT * FROM (SELECT * FROM t LIMIT +?) AS a LIMIT 10",
  );
  assert.equal(
    limitsAsExpressions("SELECT 'LIMIT' AS word FROM t"),
    "SELECT 'LIMIT' AS word FROM t",
  );
});
