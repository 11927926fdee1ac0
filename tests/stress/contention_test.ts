/**
 * Contention: many server processes send and read on one topic at once.
 * No client ever sees DB_BUSY (or any error), every reader gets every other
 * peer's message exactly once, and seqs arrive strictly increasing.
 */

import assert from "node:assert/strict";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { size } from "./_size.ts";

const PEERS = size(16, 4);
const EACH = size(500, 100);

interface Message {
  seq: number;
  sender: string;
  client_message_id: string;
}

Deno.test(`${PEERS} processes each send ${EACH} messages and read all the others' without loss`, async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/contention.sqlite`;
  const peers: Peer[] = await Promise.all(
    Array.from({ length: PEERS }, () => startPeer({ dbPath })),
  );
  try {
    const topicId = (await peers[0]!.ok("topic_create", { name: "contention" })).topic_id;
    await Promise.all(
      peers.map((peer, i) => peer.ok("topic_join", { agent_name: `peer-${i}`, topic_id: topicId })),
    );
    const expected = (PEERS - 1) * EACH;
    const errors: string[] = [];
    const work = async (peer: Peer, index: number) => {
      const received: Message[] = [];
      let sent = 0;
      while (sent < EACH || received.length < expected) {
        const outbox = sent < EACH
          ? [{ content_markdown: `from ${index}: ${sent}`, client_message_id: `p${index}-${sent}` }]
          : [];
        const result = await peer.call("sync", {
          topic_id: topicId,
          outbox,
          wait_seconds: sent < EACH ? 0 : 5,
        });
        if (result.isError) {
          errors.push(JSON.stringify(result.structuredContent));
          if (errors.length > 10) throw new Error(errors.join("\n"));
          continue;
        }
        sent += outbox.length;
        received.push(...(result.structuredContent as { received: Message[] }).received);
      }
      return received;
    };
    const results = await Promise.all(peers.map(work));
    assert.deepEqual(errors, [], "no client saw DB_BUSY or any other error");
    results.forEach((received, index) => {
      const seqs = received.map((m) => m.seq);
      assert.ok(
        seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!),
        `peer ${index} saw seqs strictly increasing`,
      );
      const ids = new Set(received.map((m) => m.client_message_id));
      assert.equal(ids.size, received.length, `peer ${index} got no duplicates`);
      assert.equal(received.length, expected, `peer ${index} got every other peer's message`);
      assert.ok(received.every((m) => m.sender !== `peer-${index}`), "own messages are not echoed");
    });
    const all = await peers[0]!.ok("topic_presence", { topic_id: topicId });
    assert.equal(all.count, PEERS);
  } finally {
    await Promise.all(peers.map((peer) => peer.close()));
  }
});
