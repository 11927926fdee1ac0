/**
 * Round trips to PostgreSQL per operation, counted by the store (every batch
 * sent is one): a `sync` that sends reads everything it needs before it
 * inserts in one batch, so one message or ten (each with its
 * `client_message_id`) cost the same three round trips: the reads with
 * `BEGIN` and the lock, the inserts with the read of what is unread, and
 * `COMMIT`. Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { PostgresStore } from "../../lib/store/postgres/mod.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { postgresBin, startPostgres } from "../_helpers/postgres.ts";

const bin = await postgresBin();
const ignore = "unavailable" in bin;

Deno.test({
  name: `a sync that sends 1 or 10 messages is 3 round trips on PostgreSQL${
    ignore ? ` (skipped: ${bin.unavailable})` : ""
  }`,
  ignore,
}, async () => {
  await using pg = await startPostgres();
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
});
