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
