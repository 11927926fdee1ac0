/**
 * The PostgreSQL test harness and the client the PostgreSQL store will use
 * (`npm:postgres`): a throwaway cluster starts, LISTEN/NOTIFY wakes a
 * second connection, and the client reconnects after the server restarts.
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { postgresBin, startPostgres } from "../_helpers/postgres.ts";

const bin = await postgresBin();
const skip = "unavailable" in bin ? ` (SKIPPED: ${bin.unavailable})` : "";

Deno.test({
  name: `a throwaway cluster serves LISTEN/NOTIFY and survives a restart${skip}`,
  ignore: "unavailable" in bin,
  async fn() {
    await using pg = await startPostgres();
    const listener = postgres(pg.url, { max: 1, onnotice: () => {} });
    const writer = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const heard = Promise.withResolvers<string>();
      await listener.listen("bus_changes", (payload) => heard.resolve(payload));
      await writer`SELECT pg_notify('bus_changes', 'topic-1')`;
      assert.equal(await heard.promise, "topic-1");

      await writer`CREATE TABLE t (n int)`;
      await pg.stop("immediate");
      await pg.start();
      // The pool reconnects on the next query.
      let rows: { n: number }[] = [];
      for (let attempt = 0; attempt < 50 && rows.length === 0; attempt++) {
        try {
          await writer`INSERT INTO t VALUES (1)`;
          rows = await writer<{ n: number }[]>`SELECT n FROM t`;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.deepEqual([...rows], [{ n: 1 }]);
    } finally {
      await listener.end({ timeout: 1 });
      await writer.end({ timeout: 1 });
    }
  },
});
