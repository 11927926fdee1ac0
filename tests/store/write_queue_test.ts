/**
 * Tests of the writers' line (`lib/store/write_queue.ts`): writers of one
 * process take turns in the order they asked, a turn held in another
 * process makes writers wait (and `DB_BUSY` past the timeout, without
 * blocking the writers after it), a turn nobody holds is taken at once,
 * and the line spans real processes.
 */

import assert from "node:assert/strict";
import { BusError } from "../../lib/errors.ts";
import { createLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/mod.ts";
import { WriteQueue } from "../../lib/store/write_queue.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("writers of one process take their turns in the order they asked", async () => {
  await using tmp = await tmpDir();
  const queue = new WriteQueue(`${tmp.path}/bus.sqlite-lock`);
  try {
    const order: number[] = [];
    await Promise.all([1, 2, 3, 4].map(async (n) => {
      const leave = await queue.turn(5000);
      order.push(n);
      await Promise.resolve(); // a turn held across a tick still keeps the others out
      order.push(-n);
      leave();
    }));
    assert.deepEqual(order, [1, -1, 2, -2, 3, -3, 4, -4]);
  } finally {
    queue.close();
  }
});

Deno.test("a turn nobody holds is taken at once, without waiting on the event loop, unless asked again", async () => {
  await using tmp = await tmpDir();
  const lockPath = `${tmp.path}/bus.sqlite-lock`;
  const queue = new WriteQueue(lockPath);
  const other = new WriteQueue(lockPath); // its own open file: another process, for flock
  try {
    for (let round = 0; round < 3; round++) {
      let leave: (() => void) | undefined;
      void queue.turn(1000).then((given) => leave = given);
      // A blocking flock is answered by a thread of the runtime, on a later turn of the event loop.
      await Promise.resolve();
      assert.ok(leave, "the free turn was taken within the microtasks of the call");
      leave();
    }
    // Released each time: another process takes it without waiting either.
    let otherLeave: (() => void) | undefined;
    void other.turn(1000).then((given) => otherLeave = given);
    await Promise.resolve();
    assert.ok(otherLeave);
    otherLeave();
    // A writer that gave the turn up a moment ago and writes again asks the ordinary way (a
    // writer of another process that the release woke gets its chance).
    let again: (() => void) | undefined;
    const asked = queue.turn(1000, { again: true }).then((given) => again = given);
    await Promise.resolve();
    assert.equal(again, undefined);
    await asked;
    again!();
  } finally {
    queue.close();
    other.close();
  }
});

Deno.test("a turn held elsewhere makes a writer wait, DB_BUSY past its timeout, and the line moves on", async () => {
  await using tmp = await tmpDir();
  const lockPath = `${tmp.path}/bus.sqlite-lock`;
  const holder = new WriteQueue(lockPath); // its own open file: another process, for flock
  const waiter = new WriteQueue(lockPath);
  try {
    const leaveHolder = await holder.turn(1000);
    await assert.rejects(waiter.turn(150), (error: unknown) => {
      assert.ok(error instanceof BusError);
      assert.equal(error.code, "DB_BUSY");
      return true;
    });
    leaveHolder();
    const leave = await waiter.turn(5000); // not stuck behind the abandoned turn
    leave();
    (await holder.turn(5000))(); // and the lock was given back
  } finally {
    holder.close();
    waiter.close();
  }
});

Deno.test("another process's write waits for a turn held here, then commits", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const store = openStore(dbPath, { busyTimeoutMs: 10_000, log: createLogger("error") });
  store.close();
  const holder = new WriteQueue(`${dbPath}-lock`);
  const leave = await holder.turn(1000);
  const script = `
    import { openStore } from ${
    JSON.stringify(new URL("../../lib/store/mod.ts", import.meta.url).href)
  };
    import { createLogger } from ${
    JSON.stringify(new URL("../../lib/log.ts", import.meta.url).href)
  };
    const store = openStore(${
    JSON.stringify(dbPath)
  }, { busyTimeoutMs: 10000, log: createLogger("error") });
    console.log("waiting");
    await store.immediate(() => store.stmt("INSERT INTO meta VALUES ('child', 'wrote')").run());
    console.log("committed");
    store.close();
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const next = async () => {
    const { value, done } = await lines.read();
    if (!done) seen += value;
  };
  try {
    while (!seen.includes("waiting")) await next();
    const early = await Promise.race([
      (async () => {
        while (!seen.includes("committed")) await next();
        return "committed";
      })(),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 300)),
    ]);
    assert.equal(early, "still waiting", "the child does not write while the turn is held here");
    leave();
    while (!seen.includes("committed")) await next();
    assert.equal((await child.status).code, 0);
  } finally {
    holder.close();
    await lines.cancel().catch(() => {});
    try {
      child.kill();
    } catch {
      // Already exited.
    }
    await child.status;
  }
});
