/**
 * Several stores on PostgreSQL in one process, each in a thread of its own
 * with its own bridge and PostgreSQL worker (a resident bus's session
 * workers, an HTTP node's): every request reaches its worker at once. A
 * worker that waited on `Atomics.waitAsync` saw some requests only seconds
 * later (Deno settles it when V8's message loop is next pumped), which
 * failed calls with a lost connection or a passed deadline.
 *
 * @module
 */

import assert from "node:assert/strict";
import { clusterTest } from "../_helpers/postgres.ts";

const THREADS = 6;
const READS = 3000;

await clusterTest(
  `on PostgreSQL, ${THREADS} threads with a store each make ${READS} round trips apiece, none left waiting`,
  async (pg) => {
    const reports = await Promise.all(
      Array.from({ length: THREADS }, () => {
        const worker = new Worker(new URL("../fixtures/store_reader.ts", import.meta.url), {
          type: "module",
        });
        const { promise, resolve } = Promise.withResolvers<{ slowestMs: number; error?: string }>();
        worker.onmessage = (event) => resolve(event.data);
        worker.postMessage({ url: pg.url, reads: READS });
        return promise.finally(() => worker.terminate());
      }),
    );
    assert.deepEqual(reports.map((r) => r.error).filter(Boolean), [], "every read answered");
    // A request left unseen waits for the stall deadline (5 s) and fails; a busy machine's
    // slowest read is far below that.
    for (const report of reports) assert.ok(report.slowestMs < 4000, `${report.slowestMs} ms`);
  },
);
