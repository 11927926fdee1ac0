/**
 * Round trips to PostgreSQL per operation, counted by the store (every batch
 * sent is one): a `sync` that sends reads everything it needs before it
 * inserts in one batch, so one message or ten (each with its
 * `client_message_id`) cost the same three round trips: the reads with
 * `BEGIN` and the lock, the inserts with the read of what is unread, and
 * `COMMIT`. A mailbox drain and a chatbus `msg_post` cost three as well,
 * however many messages they take; a `msg_wait` that finds messages ten. Skipped where Debian's PostgreSQL is not
 * installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { PostgresStore } from "../../lib/store/postgres/mod.ts";
import { busConnect } from "../../lib/bus/chat/connect.ts";
import { postMessage } from "../../lib/bus/chat/post.ts";
import { waitMessages } from "../../lib/bus/chat/read.ts";
import { drainMail, sendMail } from "../../lib/bus/mail.ts";
import { Session } from "../../lib/bus/session.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { clusterTest } from "../_helpers/postgres.ts";

await clusterTest(
  "a sync that sends 1 or 10 messages is 3 round trips on PostgreSQL",
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
    assert.equal(await tripsOf(1, 1), 3, "one message");
    assert.equal(await tripsOf(10, 2), 3, "ten messages");
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
    assert.equal(store.roundTrips - before, 3, "ten duplicates");
  },
);

await clusterTest(
  "a mailbox drain of 1 or 10 messages is 3 round trips on PostgreSQL",
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
    assert.equal(await tripsOf(1), 3, "one message");
    assert.equal(await tripsOf(10), 3, "ten messages");
  },
);

await clusterTest("a chatbus msg_post is 3 round trips on PostgreSQL", async (pg) => {
  await using bus = openTestBus(pg.url);
  const store = bus.store as PostgresStore;
  const session = new Session();
  const connected = await busConnect(bus, session, { thread_name: "t", ide: "test", model: "m" });
  let context = { seq: connected.current_seq, token: connected.reply_token };
  const tripsOf = async (content: string) => {
    const before = store.roundTrips;
    const posted = await postMessage(bus, session, {
      thread_id: connected.thread.thread_id,
      author: connected.agent.agent_id,
      content,
      expected_last_seq: context.seq,
      reply_token: context.token,
    });
    assert.equal(posted.seq, context.seq + 1);
    context = { seq: posted.current_seq!, token: posted.reply_token! };
    return store.roundTrips - before;
  };
  await tripsOf("warm: the first call prepares statements");
  // Whether to give way (a read), then the reads with BEGIN and the lock, then the writes and COMMIT.
  assert.equal(await tripsOf("one"), 3);
  assert.equal(await tripsOf("two"), 3);

  // A msg_wait with messages there: the agent, the first read, the decision (its reads go
  // together), the catch-up window, the closing write, and the listing's extras together.
  const before = store.roundTrips;
  const read = await waitMessages(bus, session, {
    thread_id: connected.thread.thread_id,
    after_seq: 0,
    timeout_ms: 0,
    agent_id: connected.agent.agent_id,
    token: connected.agent.token,
  });
  assert.equal(read.messages.length, 3);
  assert.ok(store.roundTrips - before <= 10, `msg_wait took ${store.roundTrips - before}`);
});
