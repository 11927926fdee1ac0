/**
 * A call's database deadline (`lib/store/call_deadline.ts`) bounds each
 * stretch of database work between the call's deliberate waits, not their
 * sum: a long `sync` or `msg_wait`, woken many times by others' messages,
 * looks each time, and on a busy machine those looks must not add up to a
 * deadline that fails the call.
 */

import assert from "node:assert/strict";
import {
  callTimeLeft,
  pauseCallDeadline,
  withCallDeadline,
} from "../../lib/store/call_deadline.ts";

/** Spend `ms` as database work would: time passing outside any wait. */
function spend(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* the database's time */ }
}

Deno.test("after each deliberate wait a call has its whole database budget again", async () => {
  const BUDGET = 300;
  await withCallDeadline(BUDGET, () => {
    for (let look = 0; look < 4; look++) {
      spend(200);
      assert.ok(callTimeLeft() <= BUDGET - 200, "the stretch's work counts");
      assert.ok(callTimeLeft() > 0, `look ${look}: the deadline has not passed`);
      pauseCallDeadline(5); // woken after a short wait
      assert.ok(callTimeLeft() > BUDGET - 50, `look ${look}: a whole budget again`);
    }
    return Promise.resolve();
  });
});

Deno.test("a long deliberate wait moves the deadline on by the time waited", async () => {
  await withCallDeadline(300, () => {
    pauseCallDeadline(10_000);
    assert.ok(callTimeLeft() > 10_000, "the waited time is not the database's");
    return Promise.resolve();
  });
});

Deno.test("outside a call nothing is timed", () => {
  assert.equal(callTimeLeft(), Infinity);
  pauseCallDeadline(100);
  assert.equal(callTimeLeft(), Infinity);
});
