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
