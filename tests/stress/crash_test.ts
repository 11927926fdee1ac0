/**
 * Crash safety: the server of a sending agent is SIGKILLed at random points
 * while it sends batches with client_message_ids. After each restart the
 * agent retries its unacknowledged batch. In the end every acknowledged
 * message exists exactly once, a batch is stored whole or not at all, seqs
 * are unique and gapless, and the database is intact.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { prng, SEED, size } from "./_size.ts";

const KILLS = size(50, 10);

interface Batch {
  id: number;
  messages: { content_markdown: string; client_message_id: string }[];
}

Deno.test(`acknowledged messages survive ${KILLS} SIGKILLs of their server exactly once (seed ${SEED})`, async () => {
  const random = prng(SEED);
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/crash.sqlite`;
  let topicId: string;
  let token: string;
  {
    await using setup = await startPeer({ dbPath });
    topicId = (await setup.ok("topic_create", { name: "crash" })).topic_id as string;
    token = (await setup.ok("topic_join", { agent_name: "sender", topic_id: topicId }))
      .reclaim_token as string;
  }
  const batches: Batch[] = [];
  const acked = new Set<number>();
  const newBatch = (): Batch => {
    const id = batches.length;
    const count = 1 + Math.floor(random() * 5);
    const batch = {
      id,
      messages: Array.from({ length: count }, (_, i) => ({
        content_markdown: `batch ${id} message ${i}`,
        client_message_id: `b${id}-m${i}`,
      })),
    };
    batches.push(batch);
    return batch;
  };
  const send = async (peer: Peer, batch: Batch) => {
    const result = await peer.call("sync", {
      topic_id: topicId,
      outbox: batch.messages,
      wait_seconds: 0,
    });
    if (result.isError) throw new Error(`sync failed: ${JSON.stringify(result.structuredContent)}`);
    acked.add(batch.id);
  };

  let pending: Batch | undefined;
  for (let round = 0; round <= KILLS; round++) {
    const peer = await startPeer({ dbPath });
    await peer.ok("topic_join", { agent_name: "sender", topic_id: topicId, reclaim_token: token });
    if (pending) {
      await send(peer, pending); // the agent retries what it never saw acknowledged
      pending = undefined;
    }
    if (round === KILLS) {
      await peer.close();
      break;
    }
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      peer.kill("SIGKILL");
    }, 5 + random() * 60);
    while (!killed) {
      pending = newBatch();
      try {
        await send(peer, pending);
        pending = undefined;
      } catch {
        break; // the server died with this batch in flight
      }
    }
    clearTimeout(timer);
    await peer.close();
  }

  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const check = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
    assert.equal(check.integrity_check, "ok");
    const rows = db.prepare(
      "SELECT seq, client_message_id FROM messages WHERE topic_id = ? ORDER BY seq",
    ).all(topicId) as { seq: number; client_message_id: string }[];
    assert.deepEqual(
      rows.map((r) => r.seq),
      rows.map((_, i) => i + 1),
      "seqs are unique and gapless",
    );
    const stored = new Map<string, number>();
    for (const row of rows) {
      stored.set(row.client_message_id, (stored.get(row.client_message_id) ?? 0) + 1);
    }
    for (const batch of batches) {
      for (const message of batch.messages) {
        const copies = stored.get(message.client_message_id) ?? 0;
        if (acked.has(batch.id)) {
          assert.equal(
            copies,
            1,
            `acknowledged ${message.client_message_id} is stored exactly once`,
          );
        } else {
          assert.equal(copies, 0, `never acknowledged ${message.client_message_id} is absent`);
        }
      }
    }
    assert.equal(rows.length, [...stored.values()].length, "no message without a batch");
    assert.ok(acked.size > KILLS, "every round acknowledged something");
  } finally {
    db.close();
  }
});
