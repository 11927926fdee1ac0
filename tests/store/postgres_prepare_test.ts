/**
 * A write never leaves PostgreSQL waiting for its client while it holds a
 * lock. The client prepares a statement with parameters, the first time it
 * runs on a connection, in two exchanges (`Parse`/`Describe`/`Flush`, then
 * the rest once the answer is back), and a server waiting between them
 * applies no timeout: a host that stalled there would hold the bus's locks
 * until its connection closed (found as one host's stalled path making
 * another's send fail with `DB_BUSY` after 10 s). The test reads every
 * message a fresh process sends through a recording proxy while it writes
 * with statements new to its connection. Skipped where Debian's PostgreSQL
 * is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { TOPIC_LOCK_CLASS, topicLockKey } from "../../lib/store/postgres/locks.ts";
import { connectAgent, post } from "../_helpers/chat.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { readTopic } from "../_helpers/peer.ts";
import { flushesUnderLock, startWireRecorder } from "../_helpers/pg_wire.ts";
import { clusterTest } from "../_helpers/postgres.ts";

await clusterTest(
  "a write's statements new to its connection are prepared before its locks: no lock is held while the server waits for the client",
  async (pg) => {
    await using recorder = await startWireRecorder(pg.url);
    await using peer = await connectInProcess(recorder.url, "peer");
    const topic = (await peer.ok("topic_create", { name: "prepared" })).topic_id as string;
    await peer.ok("topic_join", { agent_name: "ann", topic_id: topic });
    // Scoped writes (a send, with its commit lock) and writes of the whole bus, each new here.
    for (let round = 0; round < 3; round++) {
      await peer.ok("sync", {
        topic_id: topic,
        outbox: [{ content_markdown: `message ${round}`, client_message_id: `c${round}` }],
        wait_seconds: 0,
      });
    }
    await peer.ok("topic_create", { name: "another" });
    await using chat = await connectInProcess(recorder.url, "chatbus");
    const agent = await connectAgent(chat, "prepared-thread");
    await post(agent, "posted");
    await post(agent, "posted again");

    const messages = await recorder.messages();
    const flushes = messages.filter((m) => m.type === "H").length;
    assert.ok(flushes > 0, "the recorder sees statements prepared (each with a Flush)");
    assert.deepEqual(flushesUnderLock(messages), [], "no Flush while a lock is held");
    // Every write happened once, retried or not.
    await using auditor = await connectInProcess(pg.url, "peer");
    await auditor.ok("topic_join", { agent_name: "auditor", topic_id: topic });
    const stored = (await readTopic(auditor, topic)).map((m) => m.content_markdown);
    assert.deepEqual(stored.filter((c) => c.startsWith("message")), [
      "message 0",
      "message 1",
      "message 2",
    ]);
  },
);

await clusterTest(
  "a write run again for a statement new to its connection keeps what the session read while the topic was locked: nothing is delivered twice",
  async (pg) => {
    await using reader = await connectInProcess(pg.url, "peer");
    await using writer = await connectInProcess(pg.url, "peer");
    const topic = (await reader.ok("topic_create", { name: "read-while-locked" }))
      .topic_id as string;
    await reader.ok("topic_join", { agent_name: "reader", topic_id: topic });
    await writer.ok("topic_join", { agent_name: "writer", topic_id: topic });
    const send = (text: string) =>
      writer.ok("sync", { topic_id: topic, outbox: [{ content_markdown: text }], wait_seconds: 0 });
    const read = async () =>
      ((await reader.ok("sync", { topic_id: topic, wait_seconds: 0 })).received as {
        content_markdown: string;
      }[]).map((m) => m.content_markdown);
    await send("one");
    await send("two");
    // Another holds the topic's lock: the reader's sync reads without recording its cursor (the
    // session keeps it, for its next write to record).
    const other = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const held = Promise.withResolvers<void>();
      const locked = Promise.withResolvers<void>();
      const holding = other.begin(async (tx) => {
        await tx.unsafe(
          `SELECT pg_advisory_xact_lock(${TOPIC_LOCK_CLASS}, ${topicLockKey(topic)})`,
        );
        locked.resolve();
        await held.promise;
      });
      await locked.promise;
      assert.deepEqual(await read(), ["one", "two"]);
      held.resolve();
      await holding;
      // Fresh connections: the reader's next write meets statements new to them, and runs again.
      await other.unsafe(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity " +
          "WHERE application_name = 'agent-bus' AND pid <> pg_backend_pid()",
      );
    } finally {
      await other.end();
    }
    await send("three");
    assert.deepEqual(await read(), ["three"]);
  },
);
