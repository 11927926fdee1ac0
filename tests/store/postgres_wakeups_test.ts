/**
 * Wake-ups across processes on PostgreSQL name their topic: a process parked
 * in a `sync` on one topic does not re-read for commits to other topics (it
 * sends nothing to the database while they happen), and wakes at once for its
 * own. Two in-process servers, each with its own connections and listener,
 * stand for two processes. Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { PostgresStore } from "../../lib/store/postgres/mod.ts";
import { connectInProcess, type InProcess } from "../_helpers/in_process.ts";
import { until } from "../_helpers/peer.ts";
import { clusterTest } from "../_helpers/postgres.ts";
import postgres from "postgres";
import { WRITE_LOCK } from "../../lib/store/postgres/locks.ts";
import { claimLease } from "../../lib/store/leases.ts";
import { Indexer } from "../../lib/search/indexer.ts";
import { EmbeddingsClient } from "../../lib/search/embeddings.ts";

async function join(peer: InProcess, topicId: string, agent: string): Promise<void> {
  await peer.ok("topic_join", { agent_name: agent, topic_id: topicId });
}

await clusterTest(
  "a sync parked on one topic sends nothing while other topics get commits",
  async (pg) => {
    await using watcher = await connectInProcess(pg.url, "peer");
    await using sender = await connectInProcess(pg.url, "peer");
    const store = watcher.bus.store as PostgresStore;
    const heard: string[] = [];
    store.subscribe((topics) => heard.push(...topics ?? ["(any)"]));
    const create = async (name: string) =>
      (await sender.ok("topic_create", { name })).topic_id as string;
    const quiet = await create("quiet");
    const busy = await create("busy");
    const fence = await create("fence");
    await join(watcher, quiet, "watcher");
    for (const topic of [quiet, busy, fence]) await join(sender, topic, "sender");
    const send = (topic: string, content: string) =>
      sender.ok("sync", {
        topic_id: topic,
        outbox: [{ content_markdown: content }],
        wait_seconds: 0,
      });
    // Notifications arrive in commit order: once the fence's is heard, so are the set-up's.
    await send(fence, "fence");
    await until(() => heard.includes(fence), { what: "the watcher heard the set-up" });

    const parked = watcher.ok("sync", { topic_id: quiet, wait_seconds: 30 });
    parked.catch(() => {}); // (awaited below; a failure before that must not go unhandled)
    await until(() => watcher.bus.changes.waiting === 1, { what: "the watcher's sync is parked" });
    const trips = store.roundTrips;
    heard.length = 0;
    for (let i = 0; i < 20; i++) await send(busy, `busy ${i}`);
    await until(() => heard.length >= 20, { what: "the watcher heard all 20 commits" });
    assert.deepEqual(new Set(heard), new Set([busy]), "each named its topic");
    assert.equal(store.roundTrips - trips, 0, "no re-read for commits to another topic");
    assert.equal(watcher.bus.changes.waiting, 1);

    await send(quiet, "for the watcher");
    const woken = await parked;
    assert.equal(woken.status, "ready");
    assert.deepEqual(
      (woken.received as { content_markdown: string }[]).map((m) => m.content_markdown),
      ["for the watcher"],
    );
  },
);

await clusterTest(
  "the index's upkeep takes the bus lock shared and wakes nobody; an indexer that does not index sleeps through commits",
  async (pg) => {
    await using sender = await connectInProcess(pg.url, "peer");
    await using idle = await connectInProcess(pg.url, "peer");
    const store = idle.bus.store as PostgresStore;
    const { topic_id } = await sender.ok("topic_create", { name: "busy" });
    await sender.ok("topic_join", { agent_name: "s", topic_id });

    // A writer of a topic holds the bus lock shared: an upkeep write does not wait for it.
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const writer = await sql.reserve();
    await writer`BEGIN`;
    await writer.unsafe(`SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK})`);
    const heard: unknown[] = [];
    const stop = (sender.bus.store as PostgresStore).subscribe((topics) => heard.push(topics));
    try {
      const claimed = await store.immediate(
        () => claimLease(store, { name: "probe", holder: "me", now: 1, expiresAt: 2 }),
        { topics: [], waitMs: 2000 },
      );
      assert.equal(claimed, true, "the lease was taken beside the writer");
    } finally {
      await writer`ROLLBACK`;
      writer.release();
      await sql.end();
    }
    // The fence's notification comes after the upkeep's would have: none came.
    await sender.ok("sync", { topic_id, outbox: [{ content_markdown: "fence" }], wait_seconds: 0 });
    await until(() => heard.length > 0, { what: "the fence heard" });
    stop();
    assert.deepEqual(heard, [[topic_id]], "the upkeep write woke nobody");

    // An indexer whose endpoint is benched (the default without Ollama) does not wake for commits.
    const indexer = new Indexer({
      store,
      config: { ...idle.bus.config.embeddings, url: "http://127.0.0.1:9", autoindex: true },
      embeddings: new EmbeddingsClient({
        url: "http://127.0.0.1:9",
        api: "ollama",
        timeoutMs: 1000,
        retryMs: 60_000,
      }),
      log: idle.bus.log,
    });
    await sender.ok("sync", { topic_id, outbox: [{ content_markdown: "work" }], wait_seconds: 0 });
    indexer.start(); // (its first round finds the endpoint down: benched for a minute)
    try {
      await until(() => indexer.status().state === "unavailable", { what: "benched" });
      const trips = store.roundTrips;
      let heardCommits = 0;
      const count = store.subscribe(() => heardCommits++);
      for (let i = 0; i < 30; i++) {
        await sender.ok("sync", {
          topic_id,
          outbox: [{ content_markdown: `m${i}` }],
          wait_seconds: 0,
        });
      }
      await until(() => heardCommits >= 30, { what: "30 commits heard" });
      count();
      assert.equal(store.roundTrips - trips, 0, "the benched indexer sent nothing for them");
    } finally {
      await indexer.stop();
    }
  },
);
