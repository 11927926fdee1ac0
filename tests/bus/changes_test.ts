/**
 * Tests of the change feed: waiters wake on other connections' commits in
 * each of its modes, and file events that never come are given up on.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ChangeFeed, type DirWatcher } from "../../lib/bus/changes.ts";
import { createLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/mod.ts";
import { sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const log = createLogger("error");

async function withFeed(
  options: ConstructorParameters<typeof ChangeFeed>[1],
  body: (feed: ChangeFeed, commit: () => void) => Promise<void>,
) {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  const store = openStore(path, { busyTimeoutMs: 1000, log });
  const other = new DatabaseSync(path);
  const feed = new ChangeFeed(store, options);
  try {
    await body(
      feed,
      () => other.exec("INSERT INTO meta (key, value) VALUES (hex(randomblob(8)), 'x')"),
    );
  } finally {
    feed.close();
    other.close();
    store.close();
  }
}

sqliteTest(
  "ChangeFeed wakes a quiet waiter through file events",
  "SQLite's wake-ups (data_version, file events); PostgreSQL's are LISTEN/NOTIFY",
  async () => {
    await withFeed({ hotMs: 0, slowMs: 60_000 }, async (feed, commit) => {
      const waiting = feed.wait(feed.mark(), { timeoutMs: 20_000 });
      commit();
      assert.equal(await waiting, "changed");
      assert.equal(feed.mode, "events");
    });
  },
);

sqliteTest(
  "ChangeFeed wakes a waiter by polling when events are off",
  "SQLite's wake-ups (data_version, file events); PostgreSQL's are LISTEN/NOTIFY",
  async () => {
    await withFeed({ watch: false }, async (feed, commit) => {
      const waiting = feed.wait(feed.mark(), { timeoutMs: 20_000 });
      commit();
      assert.equal(await waiting, "changed");
      assert.equal(feed.mode, "polling");
    });
  },
);

sqliteTest(
  "ChangeFeed falls back to polling when file events never come",
  "SQLite's wake-ups (data_version, file events); PostgreSQL's are LISTEN/NOTIFY",
  async () => {
    const silent = (): DirWatcher => {
      const never = new Promise<IteratorResult<{ paths: string[] }>>(() => {});
      return { close() {}, [Symbol.asyncIterator]: () => ({ next: () => never }) };
    };
    await withFeed({ hotMs: 0, slowMs: 5, watchFs: silent }, async (feed, commit) => {
      for (let i = 0; i < 3; i++) {
        const waiting = feed.wait(feed.mark(), { timeoutMs: 20_000 });
        commit();
        assert.equal(await waiting, "changed", "the safety-net poll still wakes it");
      }
      assert.equal(feed.mode, "polling");
    });
  },
);

Deno.test("ChangeFeed resolves timeout and honours abort", async () => {
  await withFeed({}, async (feed) => {
    assert.equal(await feed.wait(feed.mark(), { timeoutMs: 20 }), "timeout");
    const controller = new AbortController();
    const waiting = feed.wait(feed.mark(), { timeoutMs: 20_000, signal: controller.signal });
    controller.abort(new Error("stop"));
    await assert.rejects(waiting, /stop/);
    assert.equal(feed.waiting, 0);
  });
});

Deno.test("a waiter on some topics is woken by changes to them or to anything, not to others", async () => {
  await withFeed({}, async (feed, commit) => {
    const before = feed.mark();
    feed.notify(["other"]);
    assert.equal(
      await feed.wait(before, { timeoutMs: 20, topics: ["mine"] }),
      "timeout",
      "a change to another topic, made before the wait, does not count",
    );
    assert.equal(await feed.wait(before, { timeoutMs: 20 }), "changed", "it does for everyone");

    const parked = (mark = feed.mark()) =>
      feed.wait(mark, { timeoutMs: 20_000, topics: ["mine", "also"] });
    for (const topics of [["also"], undefined]) {
      const waiting = parked();
      feed.notify(["other"]);
      assert.equal(feed.waiting, 1, "still parked after a change to another topic");
      feed.notify(topics);
      assert.equal(await waiting, "changed");
    }
    // Another process's commit names no topic: it wakes every waiter.
    const waiting = parked();
    commit();
    assert.equal(await waiting, "changed");
  });
});
