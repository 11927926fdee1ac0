/**
 * A stdio server on PostgreSQL whose path to the database stalls (a proxy
 * that stops forwarding without closing anything) keeps answering what needs
 * no database: its session runs in a worker (`lib/transports/stdio.ts`), so
 * `ping` and `tools/list` are answered while a call waits for the database,
 * where the whole process used to block for the stall deadline. Here rather
 * than in `tests/transports/`, like every test with a cluster of its own.
 * Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import { startPeer } from "../_helpers/peer.ts";
import { answeredWithin, retriedAfterStall, startStallProxy } from "../_helpers/pg_fleet.ts";
import { clusterTest } from "../_helpers/postgres.ts";

/** Far below the 5 s a stalled batch blocked the whole process for. */
const ANSWER_MS = 1000;

await clusterTest(
  "on PostgreSQL, a stdio server answers ping and tools/list while a call waits for a stalled database",
  async (pg) => {
    await using proxy = await startStallProxy(pg.url);
    await using peer = await startPeer({ dbPath: proxy.url });
    const tools = (await peer.client.listTools()).tools.map((tool) => tool.name);
    const topic = await peer.ok("topic_create", { name: "stalled" });
    await peer.ok("topic_join", { agent_name: "patient", topic_id: topic.topic_id });

    await proxy.stall();
    let settled = false;
    const stuck = peer.call("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: "sent into a stall", client_message_id: "stall-1" }],
      wait_seconds: 0,
    }).finally(() => settled = true);
    const timed = <T>(what: string, call: () => Promise<T>) =>
      answeredWithin(ANSWER_MS, what, call);
    for (let i = 0; i < 5; i++) {
      await timed(`ping ${i}`, () => peer.client.ping());
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const listed = await timed("tools/list", () => peer.client.listTools());
    assert.deepEqual(listed.tools.map((tool) => tool.name), tools);
    assert.equal(settled, false, "the call was still waiting for the database meanwhile");

    await proxy.resume();
    // Once the path is back the session works again, and the send is stored once.
    const seq = await retriedAfterStall(await stuck, () =>
      peer.call("sync", {
        topic_id: topic.topic_id,
        outbox: [{ content_markdown: "sent into a stall", client_message_id: "stall-1" }],
        wait_seconds: 0,
      }));
    assert.equal(seq, 1);
  },
);
