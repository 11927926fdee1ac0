/**
 * Every acknowledged message is findable by the next search, and a search
 * never waits for a writer: server processes search for words another
 * process just sent while a third keeps sending (1,000 searches, two at a
 * time, no miss allowed); a full-text lease held by a process that never
 * indexes, and a write lock held by another program, change neither what a
 * search finds nor how soon it answers. Reads of every other kind (topic
 * list, console pages, REST search, export) answer while the lock is held.
 */

import assert from "node:assert/strict";
import { openTestBus, openTestSearch, seedTopic } from "../_helpers/bus.ts";
import { connectInProcess, serveHttpInProcess } from "../_helpers/in_process.ts";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { execSql, holdWriteLock, readRows, sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Searches the first test makes (two per round). */
const SEARCHES = 1_000;

async function joined(peer: Peer, topicId: string, name: string): Promise<void> {
  await peer.ok("topic_join", { agent_name: name, topic_id: topicId });
}

async function send(peer: Peer, topicId: string, content: string): Promise<string> {
  const result = await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: content }],
    wait_seconds: 0,
  }) as { sent: { message: { message_id: string } }[] };
  return result.sent[0]!.message.message_id;
}

Deno.test("a word sent and acknowledged is found by the next search in other processes, while a writer keeps sending", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using writer = await startPeer({ dbPath });
  await using noise = await startPeer({ dbPath });
  await using searchA = await startPeer({ dbPath });
  await using searchB = await startPeer({ dbPath });
  const topicId = (await writer.ok("topic_create", { name: "visibility" })).topic_id as string;
  await joined(writer, topicId, "writer");
  await joined(noise, topicId, "noise");
  await joined(searchA, topicId, "a");
  await joined(searchB, topicId, "b");

  let stop = false;
  let noiseSent = 0;
  const noisy = (async () => {
    while (!stop) {
      await noise.ok("sync", {
        topic_id: topicId,
        outbox: Array.from(
          { length: 5 },
          (_, i) => ({ content_markdown: `filler ${noiseSent + i}` }),
        ),
        wait_seconds: 0,
      });
      noiseSent += 5;
    }
  })();
  const misses: string[] = [];
  let searches = 0;
  try {
    for (let round = 0; searches < SEARCHES; round++) {
      const word = `zq${round}v${crypto.randomUUID().slice(0, 8)}`;
      const id = await send(writer, topicId, `the marker ${word} was sent`);
      const found = await Promise.all(
        [searchA, searchB].map((peer) =>
          peer.ok("messages_search", { query: word, mode: "fts" }) as Promise<{
            results: { message_id: string }[];
          }>
        ),
      );
      for (const result of found) {
        searches++;
        if (!result.results.some((r) => r.message_id === id)) misses.push(word);
      }
    }
  } finally {
    stop = true;
    await noisy;
  }
  assert.equal(searches, SEARCHES);
  assert.ok(noiseSent > 0, "the other writer sent meanwhile");
  assert.deepEqual(misses, [], `${misses.length} of ${searches} searches missed their message`);
});

sqliteTest(
  "a full-text lease held by a process that never indexes, and a write lock held elsewhere, hide nothing from searches and delay none",
  "the deferred full-text index and its lease are SQLite's; PostgreSQL writes the row with the message",
  async () => {
    await using tmp = await tmpDir();
    const path = `${tmp.path}/bus.sqlite`;
    const env = { AGENT_BUS_EMBEDDINGS_AUTOINDEX: "0", AGENT_BUS_BUSY_TIMEOUT_MS: "2000" };
    await using bus = openTestBus(path, env);
    await using engine = openTestSearch(bus, env);
    // A process that took the lease and will never use it (nor let it expire soon).
    await execSql(
      path,
      "INSERT OR REPLACE INTO bus_leases (name, holder, expires_at) VALUES ('full-text', 'gone', ?)",
      Date.now() / 1000 + 3600,
    );
    const words = Array.from(
      { length: 200 },
      (_, i) => `kw${i}q${crypto.randomUUID().slice(0, 6)}`,
    );
    for (let i = 0; i < words.length; i += 50) {
      await seedTopic(bus, "tail", words.slice(i, i + 50).map((w) => `about ${w} today`));
    }
    assert.equal(await engine.indexer.runOnce(), false, "the lease keeps this indexer out");
    const release = await holdWriteLock(path);
    try {
      let misses = 0;
      let slowest = 0;
      for (let i = 0; i < words.length; i += 2) {
        const started = performance.now();
        // Two at once in one process, as two sessions of one server would.
        const results = await Promise.all(
          [words[i]!, words[i + 1]!].map((query) =>
            engine.search({ query, mode: "fts", limit: 5, includeContent: false })
          ),
        );
        slowest = Math.max(slowest, performance.now() - started);
        misses += results.filter((r) => r.count !== 1).length;
      }
      assert.equal(misses, 0);
      assert.ok(slowest < 1_000, `a search waited ${slowest.toFixed(0)} ms for the writer`);
    } finally {
      await release();
    }
    // The lease lapses (here: is given up); the indexer writes the rows and searches still find each once.
    await execSql(path, "DELETE FROM bus_leases WHERE name = 'full-text'");
    assert.equal(await engine.indexer.runOnce(), true);
    const again = await engine.search({
      query: words[7]!,
      mode: "fts",
      limit: 5,
      includeContent: false,
    });
    assert.equal(again.count, 1);
  },
);

Deno.test("reads answer while another program holds the write lock: search, a sync that sends nothing, topic_list, console pages, REST search, export", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_BUSY_TIMEOUT_MS: "2000", AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" };
  await using peer = await connectInProcess(path, "peer", { env });
  await using http = serveHttpInProcess(path, env);
  const topicId = (await peer.ok("topic_create", { name: "locked" })).topic_id as string;
  await peer.ok("topic_join", { agent_name: "me", topic_id: topicId });
  await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "the ocelot sleeps" }],
    wait_seconds: 0,
  });
  await using other = await connectInProcess(path, "peer", { env });
  await other.ok("topic_join", { agent_name: "other", topic_id: topicId });
  const release = await holdWriteLock(path);
  try {
    const timed = async <T>(what: string, read: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await read();
      const took = performance.now() - started;
      assert.ok(took < 1_000, `${what} waited ${took.toFixed(0)} ms for the writer`);
      return result;
    };
    const found = await timed(
      "messages_search",
      () => peer.ok("messages_search", { query: "ocelot", mode: "fts" }),
    ) as { count: number };
    assert.equal(found.count, 1);
    // A sync that sends nothing reads without the lock; its cursor's move is recorded later.
    const synced = await timed(
      "sync",
      () => other.ok("sync", { topic_id: topicId, wait_seconds: 0 }),
    ) as {
      received: { content_markdown: string }[];
    };
    assert.deepEqual(synced.received.map((m) => m.content_markdown), ["the ocelot sleeps"]);
    const again = await timed(
      "sync again",
      () => other.ok("sync", { topic_id: topicId, wait_seconds: 0 }),
    ) as { received: unknown[] };
    assert.deepEqual(again.received, [], "what was read is not read again");
    const listed = await timed("topic_list", () => peer.ok("topic_list", {})) as {
      topics: unknown[];
    };
    assert.equal(listed.topics.length, 1);
    for (
      const url of [
        "/api/topics",
        `/api/topics/${topicId}/messages`,
        "/api/search?q=ocelot&mode=fts",
        `/api/topics/${topicId}/export?format=json`,
      ]
    ) {
      const response = await timed(url, () => fetch(`${http.url}${url}`));
      assert.equal(response.status, 200, url);
      assert.match(
        await response.text(),
        url.includes("topics/") || url.includes("search") ? /ocelot|locked/ : /locked/,
      );
    }
  } finally {
    await release();
  }
  // Once the lock is free the cursor is recorded: a new session of the same name starts after it.
  await other.ok("sync", { topic_id: topicId, wait_seconds: 0 });
  const rows = await readRows(
    path,
    "SELECT last_seq FROM cursors WHERE agent_name = 'other'",
  );
  assert.equal(Number(rows[0]!.last_seq), 1);
});
