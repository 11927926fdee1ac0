/**
 * Hostile environment: the database's directory turns read-only, the file
 * is deleted or replaced under a running server, its directory cannot be
 * created, another program holds the write lock. Each gives a clear error
 * (or transparent recovery), loses no acknowledged data, and the server
 * recovers without a restart when the condition ends.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type Peer, startPeer, until } from "../_helpers/peer.ts";
import { run } from "../_helpers/run.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { size } from "./_size.ts";

const LOCK_SECONDS = size(10, 3);

async function joined(peer: Peer, name = "agent") {
  const topic = await peer.ok("topic_create", { name: "hostile" });
  await peer.ok("topic_join", { agent_name: name, topic_id: topic.topic_id });
  return topic.topic_id as string;
}

function send(peer: Peer, topicId: string, text: string, id: string) {
  return peer.call("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: text, client_message_id: id }],
    wait_seconds: 0,
  });
}

/** Retry `fn` until it stops failing, for conditions the server rechecks once a second. */
async function eventually<T>(fn: () => Promise<T>, what: string): Promise<T> {
  let last: unknown;
  let value: T | undefined;
  await until(async () => {
    try {
      value = await fn();
      return true;
    } catch (error) {
      last = error;
      return false;
    }
  }, { timeoutMs: 10_000, everyMs: 100, what: `${what} (last error: ${last})` });
  return value!;
}

Deno.test(`a write lock held by another program for ${LOCK_SECONDS} s costs no data and no responsiveness`, async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using peer = await startPeer({ dbPath });
  const topicId = await joined(peer);
  const holder = new DatabaseSync(dbPath);
  holder.exec("BEGIN IMMEDIATE");
  const released = new Promise<void>((resolve) =>
    setTimeout(() => {
      holder.exec("ROLLBACK");
      holder.close();
      resolve();
    }, LOCK_SECONDS * 1000)
  );
  const blockedSend = send(peer, topicId, "sent while locked", "locked-1");
  const started = Date.now();
  assert.equal((await peer.ok("ping")).ok, true);
  assert.equal((await peer.ok("topic_list", {})).count, 1, "reads go on under the lock");
  assert.ok(
    Date.now() - started < (LOCK_SECONDS * 1000) / 2,
    "the server answered while a write waited",
  );
  const outcome = await blockedSend;
  if (outcome.isError) {
    const code = (outcome.structuredContent as { error: { code: string } }).error.code;
    assert.equal(code, "DB_BUSY", "a write that cannot wait any longer says so");
  }
  await released;
  const retry = await send(peer, topicId, "sent while locked", "locked-1");
  assert.ok(!retry.isError);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const copies = db.prepare(
    "SELECT COUNT(*) AS n FROM messages WHERE client_message_id = 'locked-1'",
  )
    .get() as { n: number };
  db.close();
  assert.equal(copies.n, 1, "the retried message is stored exactly once");
});

Deno.test("a database deleted under a running server is recreated, not written into a ghost", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  await joined(a);
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.remove(`${dbPath}${suffix}`).catch(() => {});
  }
  const fresh = await a.ok("topic_create", { name: "after-delete" });
  assert.equal(fresh.reused, false);
  await using b = await startPeer({ dbPath });
  const seen = await b.ok("topic_resolve", { name: "after-delete" });
  assert.equal(seen.topic_id, fresh.topic_id, "another process sees what A wrote after the delete");
  assert.match(a.stderr(), /deleted or replaced; reopening/);
});

Deno.test("after the database is deleted, a lost topic is explained as a changed file", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  const topicId = await joined(a);
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.remove(`${dbPath}${suffix}`).catch(() => {});
  }
  const lost = await a.fail("sync", { topic_id: topicId, wait_seconds: 0 });
  assert.equal(lost.code, "TOPIC_NOT_FOUND");
  assert.match(
    lost.message,
    /database file .* was deleted or replaced at .* while this server ran/,
  );
});

Deno.test("a damaged database reaches the client as a clear DB_UNAVAILABLE", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  const topicId = await joined(a);
  for (let i = 0; i < 30; i++) await send(a, topicId, `filler ${i} ${"x".repeat(3000)}`, `c-${i}`);
  const checkpoint = new DatabaseSync(dbPath);
  checkpoint.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  checkpoint.close();
  // Overwrite pages past the header with garbage, keeping the file (same inode).
  const file = await Deno.open(dbPath, { write: true });
  await file.seek(4096 * 2, Deno.SeekMode.Start);
  await file.write(new Uint8Array(4096 * 20).fill(0xa5));
  file.close();
  const failure = await eventually(async () => {
    const result = await a.call("messages_search", { query: "filler", mode: "fts" });
    if (!result.isError) throw new Error("not noticed yet");
    return (result.structuredContent as { error: { code: string; message: string } }).error;
  }, "the damage to be reported");
  assert.equal(failure.code, "DB_UNAVAILABLE");
  assert.match(failure.message, /is damaged \(SQLite: .*malformed/);
});

Deno.test("a database replaced under a running server is reported, then used when valid again", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath });
  const topicId = await joined(a);
  assert.ok(!(await send(a, topicId, "before the swap", "swap-1")).isError);
  // Move the real database aside (with its WAL) and put a foreign one in its place.
  const checkpoint = new DatabaseSync(dbPath);
  checkpoint.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  checkpoint.close();
  await Deno.rename(dbPath, `${tmp.path}/aside.sqlite`);
  for (const suffix of ["-wal", "-shm"]) await Deno.remove(`${dbPath}${suffix}`).catch(() => {});
  const foreign = new DatabaseSync(dbPath);
  foreign.exec(
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('schema_version', '5');",
  );
  foreign.close();
  const mismatch = await a.fail("topic_list", {});
  assert.equal(mismatch.code, "DB_SCHEMA_MISMATCH");
  // Put the real one back: the server picks it up again, with the data intact.
  await Deno.remove(dbPath);
  await Deno.rename(`${tmp.path}/aside.sqlite`, dbPath);
  const topics = await eventually(
    () => a.ok("topic_list", {}),
    "the server to reopen the database",
  );
  assert.equal(topics.count, 1);
  const found = await a.ok("messages_search", { query: "swap", mode: "fts" });
  assert.equal(found.count, 1, "the message written before the swap is still there");
});

Deno.test("a database path that cannot be created gives DB_UNAVAILABLE until it can", async () => {
  await using tmp = await tmpDir();
  const blocker = `${tmp.path}/disk`;
  await Deno.writeTextFile(blocker, "a file where a directory should be");
  const dbPath = `${blocker}/agent_bus/bus.sqlite`;
  await using peer = await startPeer({
    dbPath: `${tmp.path}/x.sqlite`,
    env: { AGENT_BUS_DB: dbPath },
  });
  assert.equal((await peer.ok("ping")).ok, true, "ping needs no database");
  const failure = await peer.fail("topic_create", { name: "nowhere" });
  assert.equal(failure.code, "DB_UNAVAILABLE");
  assert.match(failure.message, new RegExp(`Cannot open the database at "${dbPath}"`));
  await Deno.remove(blocker);
  const created = await eventually(
    () => peer.ok("topic_create", { name: "somewhere" }),
    "recovery",
  );
  assert.equal(created.name, "somewhere");
});

// A read-only directory needs a file system we can remount, so as root we mount a small
// tmpfs. (Linux refuses to remount read-only while a file on it is open for writing, so the
// directory turns read-only between two runs of the server.)
const mountPoint = await Deno.makeTempDir({ prefix: "agent-bus-ro-" });
const mounted =
  (await run("mount", ["-t", "tmpfs", "-o", "size=32m", "tmpfs", mountPoint]).catch(() => ({
    code: 1,
  })))
    .code === 0;

Deno.test({
  name: mounted
    ? "a read-only database directory fails writes clearly and recovers when writable again"
    : "a read-only database directory: SKIPPED, mounting a tmpfs needs root",
  ignore: !mounted,
  async fn() {
    const dbPath = `${mountPoint}/bus.sqlite`;
    try {
      let topicId: string;
      // (Servers of their own: a resident bus would hold the database open after its entries
      // went, and a mount with files open for writing cannot be made read-only.)
      {
        await using before = await startPeer({ dbPath, resident: false });
        topicId = await joined(before);
        assert.ok(!(await send(before, topicId, "before read-only", "ro-1")).isError);
      }
      assert.equal((await run("mount", ["-o", "remount,ro", mountPoint])).code, 0);
      await using peer = await startPeer({ dbPath, resident: false });
      assert.equal((await peer.ok("ping")).ok, true);
      const refused = await peer.fail("topic_join", { agent_name: "agent-2", topic_id: topicId });
      assert.equal(refused.code, "DB_UNAVAILABLE");
      assert.match(refused.message, /directory ".*" is not writable/);
      assert.equal((await run("mount", ["-o", "remount,rw", mountPoint])).code, 0);
      await eventually(
        () => peer.ok("topic_join", { agent_name: "agent-2", topic_id: topicId }),
        "the server to open the database once writable",
      );
      assert.ok(!(await send(peer, topicId, "after read-only", "ro-2")).isError);
      const found = await peer.ok("messages_search", { query: "read-only", mode: "fts" });
      assert.equal(found.count, 2, "nothing was lost");
    } finally {
      await run("umount", ["-l", mountPoint]);
      await Deno.remove(mountPoint, { recursive: true }).catch(() => {});
    }
  },
});

if (!mounted) await Deno.remove(mountPoint, { recursive: true }).catch(() => {});
