/**
 * Grouped commits on SQLite (`lib/store/sqlite.ts`): writes of one process
 * that wait for the write lock together commit in one transaction, each in
 * a savepoint of its own, so each keeps its meaning (one that throws is
 * undone alone, each sees those before it) and a write whose wait runs out
 * fails alone with `DB_BUSY`. Writes that wait on a topic (a waiting
 * `sync`'s read) follow a lone write to it in its transaction.
 *
 * @module
 */

import assert from "node:assert/strict";
import { BusError } from "../../lib/errors.ts";
import { createLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/mod.ts";
import type { FollowingWrite, Store } from "../../lib/store/types.ts";
import { WriteQueue } from "../../lib/store/write_queue.ts";
import { tmpDir } from "../_helpers/tmp.ts";

async function withStore(fn: (store: Store, dbPath: string) => Promise<void>): Promise<void> {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const store = openStore(dbPath, { busyTimeoutMs: 10_000, log: createLogger("error") });
  try {
    await store.immediate(() => store.stmt("CREATE TABLE t (n INTEGER)").run());
    await fn(store, dbPath);
  } finally {
    store.close();
  }
}

const insert = (store: Store, n: number) => store.stmt("INSERT INTO t (n) VALUES (?)").run(n);
const rows = (store: Store) =>
  store.read(() => store.stmt("SELECT n FROM t ORDER BY n").all().map((row) => row.n));
const walBytes = (dbPath: string) => Deno.statSync(`${dbPath}-wal`).size;

Deno.test("writes that wait together commit once, each undone alone when it throws", async () => {
  await withStore(async (store, dbPath) => {
    // Another process holds the writers' line, so these three wait together.
    const other = new WriteQueue(`${dbPath}-lock`);
    const leave = await other.turn(1000);
    const before = walBytes(dbPath);
    const first = store.immediate(() => insert(store, 1));
    const failing = store.immediate(() => {
      insert(store, 2);
      throw new BusError("INVALID_ARGUMENT", "the second write changes its mind");
    });
    const third = store.immediate(() => {
      insert(store, 3);
      return store.stmt("SELECT count(*) AS n FROM t").get()?.n;
    });
    leave();
    other.close();
    await first;
    await assert.rejects(
      failing,
      (error: unknown) => (error as BusError).code === "INVALID_ARGUMENT",
    );
    assert.equal(await third, 2, "the third sees the first and itself, not the undone second");
    assert.deepEqual(rows(store), [1, 3]);
    const grouped = walBytes(dbPath) - before;

    // Three one after another: three commits, each writing the table's page again.
    const alone = walBytes(dbPath);
    for (const n of [4, 5, 6]) await store.immediate(() => insert(store, n));
    const three = walBytes(dbPath) - alone;
    assert.ok(
      grouped <= three / 3,
      `the group wrote ${grouped} bytes to the log, three commits ${three}`,
    );
  });
});

Deno.test("a grouped write whose wait runs out fails alone with DB_BUSY, and never runs", async () => {
  await withStore(async (store, dbPath) => {
    const other = new WriteQueue(`${dbPath}-lock`);
    const leave = await other.turn(1000);
    let ran = false;
    const patient = store.immediate(() => insert(store, 1));
    const hasty = store.immediate(() => {
      ran = true;
      insert(store, 2);
    }, { waitMs: 20 });
    // Its wait is over while the line is still held elsewhere.
    await assert.rejects(hasty, (error: unknown) => (error as BusError).code === "DB_BUSY");
    leave();
    other.close();
    await patient;
    assert.equal(ran, false);
    assert.deepEqual(rows(store), [1]);
  });
});

Deno.test("a read between two awaits never lands inside a write's transaction", async () => {
  await withStore(async (store) => {
    let reading = true;
    let reads = 0;
    // Reads one microtask apart, all the while the writes below go through.
    const reader = (async () => {
      while (reading) {
        await Promise.resolve();
        store.read(() => store.stmt("SELECT count(*) AS n FROM t").get());
        reads++;
      }
    })();
    try {
      for (let n = 0; n < 200; n++) await store.immediate(() => insert(store, n));
    } finally {
      reading = false;
    }
    await reader;
    assert.ok(reads > 200, `${reads} reads`);
    assert.equal(rows(store).length, 200);
  });
});

/** A follower of topic "a" that inserts `n` and reports what it saw; `done` records what it was told. */
function follower(store: Store, n: number, told: unknown[], fail = false): FollowingWrite {
  return {
    run: () => {
      const seen = store.stmt("SELECT n FROM t ORDER BY n").all().map((row) => row.n);
      insert(store, n);
      if (fail) throw new BusError("INVALID_ARGUMENT", "the follower changes its mind");
      return seen;
    },
    done: (value) => told.push(value),
  };
}

Deno.test("a lone write to a topic takes its followers into its transaction, and they hear once it commits", async () => {
  await withStore(async (store, dbPath) => {
    const asked: (readonly string[])[] = [];
    const told: unknown[] = [];
    store.setFollowers!((topics) => {
      asked.push(topics);
      return topics.includes("a") ? [follower(store, 2, told)] : [];
    });
    const before = walBytes(dbPath);
    let toldWhenResolved: number | undefined;
    await store.immediate(() => insert(store, 1), { topics: ["a"] }).then(() => {
      toldWhenResolved = told.length;
    });
    const followed = walBytes(dbPath) - before;
    assert.deepEqual(told, [[1]], "the follower saw the write it followed, and was told so");
    assert.equal(toldWhenResolved, 1, "the follower hears before its writer does");
    assert.deepEqual(rows(store), [1, 2]);
    assert.deepEqual(asked, [["a"]]);

    // The same two inserts as writes of their own: two commits.
    const alone = walBytes(dbPath);
    await store.immediate(() => insert(store, 3), { topics: ["b"] });
    await store.immediate(() => insert(store, 4));
    assert.ok(
      followed < walBytes(dbPath) - alone,
      `followed: ${followed} bytes to the log; as two writes: ${walBytes(dbPath) - alone}`,
    );
    assert.deepEqual(asked, [["a"], ["b"]], "a write that names no topic has no followers");
  });
});

Deno.test("a follower's answer runs to its end before its writer hears", async () => {
  await withStore(async (store) => {
    const heard: string[] = [];
    store.setFollowers!(() => [{
      run: () => "read",
      // An answer on its way out: many awaits, none of them on I/O (a waiting call's result
      // passing through the tool and the protocol layers).
      done: async () => {
        for (let i = 0; i < 50; i++) await Promise.resolve();
        heard.push("follower answered");
      },
    }]);
    await store.immediate(() => insert(store, 1), { topics: ["a"] }).then(() => {
      heard.push("writer heard");
    });
    assert.deepEqual(heard, ["follower answered", "writer heard"]);
    // Without followers, the writer hears in the turn its write committed in.
    const order: string[] = [];
    setImmediate(() => order.push("next turn"));
    await store.immediate(() => insert(store, 2)).then(() => order.push("writer"));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(order, ["writer", "next turn"]);
    assert.deepEqual(rows(store), [1, 2]);
  });
});

Deno.test("a follower that throws is undone alone; a write that throws or commits in a group takes none", async () => {
  await withStore(async (store, dbPath) => {
    const told: unknown[] = [];
    let asked = 0;
    let failing = true;
    store.setFollowers!(() => {
      asked++;
      return [follower(store, 10, told, failing), follower(store, 11, told)];
    });
    await store.immediate(() => insert(store, 1), { topics: ["a"] });
    assert.deepEqual(rows(store), [1, 11], "the failing follower's insert is undone, not the rest");
    assert.deepEqual(told, [[1]], "only the follower that succeeded is told");

    failing = false;
    await assert.rejects(store.immediate(() => {
      insert(store, 2);
      throw new BusError("INVALID_ARGUMENT", "the write changes its mind");
    }, { topics: ["a"] }));
    assert.equal(asked, 1, "a write that failed takes no followers");

    // Two writes waiting together: a busy line, where followers wake as usual instead.
    const other = new WriteQueue(`${dbPath}-lock`);
    const leave = await other.turn(1000);
    const grouped = [
      store.immediate(() => insert(store, 3), { topics: ["a"] }),
      store.immediate(() => insert(store, 4), { topics: ["a"] }),
    ];
    leave();
    other.close();
    await Promise.all(grouped);
    assert.equal(asked, 1, "writes that commit in a group take no followers");
    assert.deepEqual(rows(store), [1, 3, 4, 11]);
  });
});
