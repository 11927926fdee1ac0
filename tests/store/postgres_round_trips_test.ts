/**
 * Round trips to PostgreSQL per operation, counted by the store (every batch
 * sent is one): a `sync` that sends reads everything it needs, what is
 * unread included, in one batch, so one message or ten (each with its
 * `client_message_id`) cost the same two round trips: the reads with `BEGIN`
 * and the locks, and the inserts with `COMMIT` (three when the cursor was
 * moved by someone else since the session's previous `sync`, which makes
 * the early read of what is unread start at the wrong place). A mailbox drain
 * and a chatbus `msg_post` are two as well (the drain's update and the
 * post's writes go with `COMMIT`; the post's fair-turns check goes with its
 * reads), however many messages they take; a `msg_wait` that finds
 * messages ten. Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { PostgresStore } from "../../lib/store/postgres/mod.ts";
import { waitMessages } from "../../lib/bus/chat/wait.ts";
import { drainMail, sendMail } from "../../lib/bus/mail.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { connectPoster } from "../_helpers/chat.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { clusterTest } from "../_helpers/postgres.ts";

await clusterTest(
  "a sync that sends 1 or 10 messages is 2 round trips on PostgreSQL",
  async (pg) => {
    await using peer = await connectInProcess(pg.url, "peer");
    const store = peer.bus.store as PostgresStore;
    const topic = await peer.ok("topic_create", { name: "round-trips" });
    await peer.ok("topic_join", { agent_name: "counter", topic_id: topic.topic_id });
    const tripsOf = async (size: number, round: number) => {
      const before = store.roundTrips;
      const result = await peer.ok("sync", {
        topic_id: topic.topic_id,
        outbox: Array.from({ length: size }, (_, i) => ({
          content_markdown: `message ${round}.${i}`,
          client_message_id: `c${round}.${i}`,
        })),
        wait_seconds: 0,
      });
      assert.equal((result.sent as unknown[]).length, size);
      return store.roundTrips - before;
    };
    await tripsOf(1, 0); // warm: the first call prepares statements
    assert.equal(await tripsOf(1, 1), 2, "one message");
    assert.equal(await tripsOf(10, 2), 2, "ten messages");
    // A retry of the same ten is answered as duplicates, at the same cost.
    const before = store.roundTrips;
    const again = await peer.ok("sync", {
      topic_id: topic.topic_id,
      outbox: Array.from({ length: 10 }, (_, i) => ({
        content_markdown: `message 2.${i}`,
        client_message_id: `c2.${i}`,
      })),
      wait_seconds: 0,
    });
    assert.ok((again.sent as { duplicate: boolean }[]).every((s) => s.duplicate));
    assert.equal(store.roundTrips - before, 2, "ten duplicates");

    // Someone else moves the cursor: the early read is set aside, and the right one made.
    await using other = await connectInProcess(pg.url, "peer");
    await other.ok("topic_join", { agent_name: "other", topic_id: topic.topic_id });
    await other.ok("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: "from the other" }],
      wait_seconds: 0,
    });
    await peer.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 }); // (reads it)
    await peer.ok("cursor_reset", { topic_id: topic.topic_id, last_seq: 0 });
    const reread = store.roundTrips;
    const replay = await peer.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
    assert.deepEqual(
      (replay.received as { content_markdown: string }[]).map((m) => m.content_markdown),
      ["from the other"],
    );
    assert.equal(store.roundTrips - reread, 3, "a read that found the cursor moved");
    const quiet = store.roundTrips;
    await peer.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
    assert.equal(store.roundTrips - quiet, 2, "a sync that sends nothing");
  },
);

await clusterTest(
  "a mailbox drain of 1 or 10 messages is 2 round trips on PostgreSQL",
  async (pg) => {
    await using bus = openTestBus(pg.url);
    const store = bus.store as PostgresStore;
    const tripsOf = async (size: number) => {
      for (let i = 0; i < size; i++) {
        await sendMail(bus, {
          from: "a",
          to: "b",
          content: `m${i}`,
          format: "text",
          source: "cli",
        });
      }
      const before = store.roundTrips;
      const drained = await drainMail(bus, "b");
      assert.deepEqual(
        drained.messages.map((m) => m.content),
        Array.from({ length: size }, (_, i) => `m${i}`),
      );
      assert.equal(drained.hasMore, false);
      return store.roundTrips - before;
    };
    await tripsOf(1); // warm: the first call prepares statements
    assert.equal(await tripsOf(1), 2, "one message");
    assert.equal(await tripsOf(10), 2, "ten messages");
  },
);

await clusterTest("a chatbus msg_post is 2 round trips on PostgreSQL", async (pg) => {
  await using bus = openTestBus(pg.url);
  const store = bus.store as PostgresStore;
  const agent = await connectPoster(bus, "t");
  const { session, connected } = agent;
  const tripsOf = async (content: string) => {
    const before = store.roundTrips;
    const expected = agent.seq + 1;
    const posted = await agent.post(content);
    assert.equal(posted.seq, expected);
    return store.roundTrips - before;
  };
  await tripsOf("warm: the first call prepares statements");
  // The reads (whether to give way among them) with BEGIN and the locks, the writes with COMMIT.
  assert.equal(await tripsOf("one"), 2);
  assert.equal(await tripsOf("two"), 2);

  // A msg_wait with messages there: the agent, the first read, the decision (its reads go
  // together), the catch-up window, the closing write, and the listing's extras together.
  // (Measured on the second: the first prepares statements, and a write whose statement is new
  // to the connection after it took its locks runs again once it is prepared.)
  const wait = () =>
    waitMessages(bus, session, {
      thread_id: connected.thread.thread_id,
      after_seq: 0,
      timeout_ms: 0,
      agent_id: connected.agent.agent_id,
      token: connected.agent.token,
    });
  await wait();
  const before = store.roundTrips;
  const read = await wait();
  assert.equal(read.messages.length, 3);
  assert.ok(store.roundTrips - before <= 10, `msg_wait took ${store.roundTrips - before}`);
});
