/**
 * Writers on PostgreSQL take turns per topic: a send or an acknowledgement
 * on one topic never waits for a writer of another topic (one stalled
 * mid-transaction included), while writes that are not scoped to a topic
 * still exclude everyone; and several processes writing to different topics
 * at once keep every guarantee: gap-free seqs, every message once in the
 * console's global order. Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { messagesSincePosition } from "../../lib/bus/admin.ts";
import {
  COMMIT_LOCK_STATEMENT,
  lockStatements,
  statementScope,
  WRITE_LOCK,
} from "../../lib/store/postgres/locks.ts";
import { LOCK_CHECK_FAILED } from "../../lib/store/postgres/lock_checks.ts";
import { openStore } from "../../lib/store/mod.ts";
import { type DeclaredScope, TOPIC_ROWS } from "../../lib/store/types.ts";
import { createLogger } from "../../lib/log.ts";
import { fileURLToPath } from "node:url";
import { connectInProcess } from "../_helpers/in_process.ts";
import { inheritedEnv, type ReadMessage, readTopic, startPeer, until } from "../_helpers/peer.ts";
import { clusterTest } from "../_helpers/postgres.ts";

Deno.test("a statement writes its topic's rows only where declared so, else reads or writes anything", () => {
  const topicRows = "DELETE FROM bus_waiters WHERE topic_id = $1 AND agent_name = $2";
  assert.equal(statementScope(topicRows, TOPIC_ROWS), "topic");
  // Undeclared, the same statement is a write of anything: the safe side, never guessed.
  assert.equal(statementScope(topicRows, undefined), "bus");
  assert.equal(statementScope("SELECT * FROM messages WHERE topic_id = $1", undefined), "read");
  assert.equal(statementScope("  select 1", undefined), "read");
  const cases = [
    "UPDATE bus_reply_tokens SET consumed_at = $1 WHERE token_hash = $2",
    "INSERT INTO messages (rowid, message_id) VALUES ($1, $2)",
    "WITH gone AS (DELETE FROM cursors RETURNING *) SELECT count(*) FROM gone",
  ];
  for (const sql of cases) assert.equal(statementScope(sql, undefined), "bus", sql);
});

Deno.test("a scoped write locks the bus shared, then its topics in one fixed order", () => {
  const forward = lockStatements(["b", "a", "b"]).map((s) => s.sql);
  const backward = lockStatements(["a", "b"]).map((s) => s.sql);
  assert.deepEqual(forward, backward);
  assert.equal(forward.length, 3);
  assert.match(forward[0]!, /pg_advisory_xact_lock_shared\(\d+\)/);
  assert.deepEqual(lockStatements(undefined).map((s) => s.sql), [
    `SELECT pg_advisory_xact_lock(${WRITE_LOCK})`,
  ]);
});

await clusterTest(
  "the test clusters fail a scoped write that touches what its locks do not guard",
  async (pg) => {
    const store = openStore(pg.url, { busyTimeoutMs: 5_000, log: createLogger("error") });
    try {
      const cursor = (sql: string, scope?: DeclaredScope) => (topicId: string) =>
        store.stmt(sql, scope).run(topicId, "ann", 0, 1);
      const insertCursor = cursor(
        `INSERT INTO cursors (topic_id, agent_name, last_seq, updated_at) VALUES (?, ?, ?, ?)`,
        TOPIC_ROWS,
      );
      const failed = (error: unknown) => String(error).includes(LOCK_CHECK_FAILED);
      // Rows of its own topic under the topic lock, anything under the bus lock: allowed.
      await store.immediate(() => insertCursor("t1"), { topics: ["t1"] });
      await store.immediate(() => insertCursor("t2"));
      // A row of a topic the write did not name.
      await assert.rejects(store.immediate(() => insertCursor("t3"), { topics: ["t1"] }), failed);
      // An undeclared statement (under the commit lock) that touches another topic's rows.
      const forget = "DELETE FROM cursors WHERE agent_name = ?";
      await assert.rejects(
        store.immediate(() => store.stmt(forget).run("ann"), { topics: ["t1"] }),
        failed,
      );
      // A statement declared as touching its topic's rows that writes a shared row.
      const bump = "UPDATE meta SET value = value WHERE key = ?";
      await assert.rejects(
        store.immediate(() => store.stmt(bump, TOPIC_ROWS).run("schema_version"), {
          topics: ["t1"],
        }),
        failed,
      );
      // Nothing of the refused writes stayed; the allowed ones did.
      const left = await store.immediate(() => store.stmt("SELECT topic_id FROM cursors").all());
      assert.deepEqual(left.map((row) => row.topic_id).sort(), ["t1", "t2"]);
    } finally {
      store.close();
    }
  },
  { checkLocks: true },
);

/** A process that takes the bus lock on the server and then blocks (a frozen host). */
const FREEZE = fileURLToPath(new URL("../_helpers/freeze_in_write.ts", import.meta.url));

/** Another program's open transaction holding `statements`' locks until released. */
async function holdLocks(url: string, statements: { sql: string }[]) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const reserved = await sql.reserve();
  await reserved`BEGIN`;
  for (const statement of statements) await reserved.unsafe(statement.sql);
  return async () => {
    await reserved`ROLLBACK`;
    reserved.release();
    await sql.end();
  };
}

await clusterTest("a write to one topic waits only for writers of that topic", async (pg) => {
  await using peer = await connectInProcess(pg.url, "peer", {
    env: { AGENT_BUS_BUSY_TIMEOUT_MS: "300" },
  });
  const topic = async (name: string) => {
    const id = (await peer.ok("topic_create", { name })).topic_id as string;
    await peer.ok("topic_join", { topic_id: id, agent_name: "ann" });
    return id;
  };
  const a = await topic("a");
  const b = await topic("b");
  const send = (topicId: string, content: string) =>
    peer.call("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: content }],
      wait_seconds: 0,
    });
  const ack = (topicId: string, seq: number) =>
    peer.call("sync", {
      topic_id: topicId,
      ack_through: seq,
      auto_advance: false,
      wait_seconds: 0,
    });
  const code = (result: Awaited<ReturnType<typeof send>>) =>
    result.isError
      ? (result.structuredContent as { error: { code: string; message: string } }).error.code
      : "ok";
  assert.equal(code(await send(a, "a1")), "ok");
  assert.equal(code(await send(b, "b1")), "ok");

  // A writer of topic a stalled mid-transaction: b's writers go on, a's wait.
  let release = await holdLocks(pg.url, lockStatements([a]));
  assert.equal(code(await send(b, "b2")), "ok", "a send to another topic");
  assert.equal(code(await ack(b, 1)), "ok", "an acknowledgement on another topic");
  assert.equal(code(await send(a, "a2")), "DB_BUSY", "a send to the held topic waits");
  await release();

  // A writer in its commit (holding the commit lock): sends wait, an acknowledgement does not.
  release = await holdLocks(pg.url, [...lockStatements([a]), COMMIT_LOCK_STATEMENT]);
  assert.equal(code(await send(b, "b3")), "DB_BUSY", "a send waits for the commit lock");
  assert.equal(code(await ack(b, 2)), "ok", "an acknowledgement does not");
  await release();

  // A write not scoped to a topic still excludes every writer.
  release = await holdLocks(pg.url, lockStatements(undefined));
  assert.equal(code(await send(b, "b4")), "DB_BUSY", "a send waits for the bus lock");
  await release();

  // Nothing refused was stored, and each topic's seqs have no gap.
  await using reader = await connectInProcess(pg.url, "peer");
  for (const [id, want] of [[a, ["a1"]], [b, ["b1", "b2"]]] as const) {
    await reader.ok("topic_join", { topic_id: id, agent_name: "reader" });
    const messages = await readTopic(reader, id) as (ReadMessage & { seq: number })[];
    assert.deepEqual(messages.map((m) => m.content_markdown), want);
    assert.deepEqual(messages.map((m) => m.seq), want.map((_, i) => i + 1));
  }
});

await clusterTest(
  "a send writes its topic's rows (cursor, counter, index rows) before it takes the commit lock",
  async (pg) => {
    // Every statement the server runs, in order, in its log (for connections made from now on).
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe("ALTER DATABASE bus SET log_statement = 'all'");
    await admin.end();
    await using peer = await connectInProcess(pg.url, "peer");
    const topicId = (await peer.ok("topic_create", { name: "indexed" })).topic_id as string;
    await using other = await connectInProcess(pg.url, "peer");
    await other.ok("topic_join", { topic_id: topicId, agent_name: "bob" });
    await other.ok("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: "a word first" }],
      wait_seconds: 0,
    });
    await peer.ok("topic_join", { topic_id: topicId, agent_name: "ann" });
    // Ann reads Bob's message as she sends: her cursor moves too.
    const sent = await peer.ok("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: "first kestrel" }, { content_markdown: "second kestrel" }],
      wait_seconds: 0,
    });
    assert.equal((sent.received as unknown[]).length, 1);
    // (One entry per logged statement: each starts with the time, and may span lines.)
    const entries = (await Deno.readTextFile(pg.logFile)).split(/\n(?=\d{4}-\d\d-\d\d )/);
    const steps = entries.flatMap((line) =>
      /INSERT INTO bus_fts\b/.test(line)
        ? ["index row"]
        : /UPDATE topic_seq\b/.test(line)
        ? ["counter"]
        : /INSERT INTO cursors\b.*SET last_seq/s.test(line)
        ? ["cursor"]
        : line.includes(COMMIT_LOCK_STATEMENT.sql)
        ? ["commit lock"]
        : /INSERT INTO messages\b/.test(line)
        ? ["message"]
        : /UPDATE meta\b.*topics_version/.test(line)
        ? ["topics version"]
        : []
    );
    assert.deepEqual(steps.slice(-8), [
      "cursor",
      "counter",
      "index row",
      "index row",
      "commit lock",
      "message",
      "message",
      "topics version",
    ]);
    // Both found by search, as every message sent is.
    const found = await peer.ok("messages_search", { query: "kestrel", mode: "fts" });
    assert.equal(found.count, 2);
  },
  { checkLocks: true },
);

await clusterTest(
  "writers frozen while queued for the bus lock leave the queue: a send waits for the holder, not for them in a row",
  async (pg) => {
    // (A process of its own: an in-process write would block this thread, the holder's too.)
    await using peer = await startPeer({ dbPath: pg.url });
    const topic = (await peer.ok("topic_create", { name: "goes on" })).topic_id as string;
    await peer.ok("topic_join", { topic_id: topic, agent_name: "ann" });
    const watch = postgres(pg.url, { max: 1, onnotice: () => {} });
    const queued = async () =>
      Number(
        (await watch`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)[
          0
        ]!
          .n,
      );
    const release = await holdLocks(pg.url, lockStatements(undefined));
    // Three hosts' writes queue for the bus lock, then the hosts freeze (as a paused VM or a
    // stalled network: their requests stay on the server, nobody answers for them). Granted the
    // lock one after another, each would hold it until the server gives up on it (4 s).
    const frozen: Deno.ChildProcess[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        frozen.push(
          new Deno.Command(Deno.execPath(), {
            args: ["run", "-A", FREEZE, pg.url],
            env: inheritedEnv(),
            stdout: "null",
            stderr: "null",
          }).spawn(),
        );
      }
      await until(async () => await queued() >= 3, { timeoutMs: 60_000, what: "3 writers queued" });
      for (const child of frozen) Deno.kill(child.pid, "SIGSTOP");
      // The send queues behind them, and the holder lets go.
      const sending = peer.call("sync", {
        topic_id: topic,
        outbox: [{ content_markdown: "after the holder" }],
        wait_seconds: 0,
      });
      await release();
      const sent = await sending;
      assert.ok(!sent.isError, `the send went through: ${JSON.stringify(sent.structuredContent)}`);
    } finally {
      for (const child of frozen) {
        child.kill("SIGKILL");
        await child.status;
      }
      await watch.end();
    }
  },
);

await clusterTest(
  "processes writing to different topics at once keep gap-free seqs and one global order",
  async (pg) => {
    await using reader = await connectInProcess(pg.url, "peer");
    const topics: string[] = [];
    for (const name of ["one", "two", "three"]) {
      topics.push((await reader.ok("topic_create", { name })).topic_id as string);
    }
    // Two writers share the first topic (they take turns); the others have one each; a fifth
    // process keeps making topics (writes that lock the whole bus) meanwhile.
    const homes = [topics[0]!, topics[0]!, topics[1]!, topics[2]!];
    const writers = await Promise.all(homes.map(() => startPeer({ dbPath: pg.url })));
    await using maker = await startPeer({ dbPath: pg.url });
    try {
      for (const [i, writer] of writers.entries()) {
        await writer.ok("topic_join", { topic_id: homes[i], agent_name: `w${i}` });
      }
      const ROUNDS = 12;
      const PER_CALL = 3;
      let done = false;
      const positions: number[] = [];
      const tail = (async () => {
        let position = 0;
        for (let last = false; !last;) {
          last = done;
          for (const event of messagesSincePosition(reader.bus, position, 200)) {
            positions.push(event.position);
            position = event.position;
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const sending = writers.map(async (writer, i) => {
        for (let round = 0; round < ROUNDS; round++) {
          const outbox = Array.from({ length: PER_CALL }, (_, k) => ({
            content_markdown: `w${i} r${round} m${k}`,
            client_message_id: `w${i}-${round}-${k}`,
          }));
          await writer.ok("sync", { topic_id: homes[i], outbox, wait_seconds: 0 });
        }
      });
      const making = (async () => {
        for (let n = 0; n < ROUNDS; n++) await maker.ok("topic_create", { name: `extra ${n}` });
      })();
      await Promise.all([...sending, making]);
      done = true;
      await tail;

      const total = writers.length * ROUNDS * PER_CALL;
      assert.equal(positions.length, total, "the global order showed every message once");
      assert.deepEqual(positions, [...positions].sort((x, y) => x - y), "in growing positions");
      assert.equal(new Set(positions).size, total);
      for (const [t, topicId] of topics.entries()) {
        await reader.ok("topic_join", { topic_id: topicId, agent_name: "reader" });
        const seqs = (await readTopic(reader, topicId) as (ReadMessage & { seq: number })[])
          .map((m) => m.seq);
        const want = homes.filter((home) => home === topicId).length * ROUNDS * PER_CALL;
        assert.deepEqual(seqs, Array.from({ length: want }, (_, i) => i + 1), `topic ${t}: no gap`);
      }
    } finally {
      await Promise.all(writers.map((writer) => writer.close()));
    }
  },
);
