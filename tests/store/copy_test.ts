/**
 * `db copy` never drops data silently: a source table it does not copy, or
 * a column the target lacks, makes it refuse before writing anything; and
 * the two engines' schemas agree column by column, every table either
 * copied or listed as not copied on purpose.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { copyLosses } from "../../lib/store/copy.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { cli } from "../_helpers/cli.ts";
import { postgresBin, startPostgres } from "../_helpers/postgres.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const bin = await postgresBin();

Deno.test("db copy refuses, writing nothing, when the source has a table or column the target lacks", async () => {
  await using tmp = await tmpDir();
  const source = `${tmp.path}/source.sqlite`;
  const target = `${tmp.path}/target.sqlite`;
  assert.equal((await cli(["topics", "create", "kept"], { AGENT_BUS_DB: source })).code, 0);
  const raw = new DatabaseSync(source);
  raw.exec("ALTER TABLE messages ADD COLUMN importance INTEGER");
  raw.exec("CREATE TABLE plugin_notes (id INTEGER PRIMARY KEY, note TEXT)");
  raw.close();
  // The target exists with an empty bus.
  assert.equal((await cli(["db", "stats"], { AGENT_BUS_DB: target })).code, 0);
  const metaOf = () => {
    const db = new DatabaseSync(target, { readOnly: true });
    try {
      return db.prepare("SELECT key, value FROM meta ORDER BY key").all();
    } finally {
      db.close();
    }
  };
  const metaBefore = metaOf();

  const refused = await cli(["db", "copy", source, target]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /DB_SCHEMA_MISMATCH/);
  assert.match(refused.stderr, /column messages\.importance is missing in the target/);
  assert.match(refused.stderr, /table plugin_notes is not copied/);
  const written = new DatabaseSync(target, { readOnly: true });
  const topics = written.prepare("SELECT COUNT(*) AS n FROM topics").get() as { n: number };
  written.close();
  assert.equal(topics.n, 0, "nothing was copied");
  assert.deepEqual(metaOf(), metaBefore, "not even meta");
});

Deno.test({
  name:
    `SQLite and PostgreSQL schemas agree for db copy: every table copied or listed, every column on both${
      "unavailable" in bin ? ` (skipped: ${bin.unavailable})` : ""
    }`,
  ignore: "unavailable" in bin,
  async fn() {
    await using tmp = await tmpDir();
    await using pg = await startPostgres();
    await using sqlite = openTestBus(`${tmp.path}/bus.sqlite`);
    await using postgres = openTestBus(pg.url);
    assert.deepEqual(copyLosses(sqlite.store, postgres.store), [], "SQLite to PostgreSQL");
    assert.deepEqual(copyLosses(postgres.store, sqlite.store), [], "PostgreSQL to SQLite");
  },
});
