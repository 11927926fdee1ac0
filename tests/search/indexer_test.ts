/**
 * The background indexer across real server processes: exactly one embeds
 * at a time, each message is embedded once, and semantic search then works
 * through MCP.
 */

import assert from "node:assert/strict";
import { startFakeEmbedServer } from "../_helpers/embed_server.ts";
import { startPeer, until } from "../_helpers/peer.ts";
import { readRows } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("one indexer embeds for three server processes sharing a database", async () => {
  await using tmp = await tmpDir();
  await using embed = startFakeEmbedServer({ delayMs: 15 });
  const dbPath = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_EMBEDDINGS_URL: embed.url, AGENT_BUS_EMBEDDING_MODEL: "fake-model" };
  await using a = await startPeer({ dbPath, env });
  await using b = await startPeer({ dbPath, env });
  await using c = await startPeer({ dbPath, env });
  const topic = await a.ok("topic_create", { name: "index" });
  const peers = [a, b, c];
  await Promise.all(
    peers.map((p, i) => p.ok("topic_join", { agent_name: `p${i}`, topic_id: topic.topic_id })),
  );
  await Promise.all(peers.map((p, i) =>
    p.ok("sync", {
      topic_id: topic.topic_id,
      outbox: Array.from({ length: 20 }, (_, k) => ({
        content_markdown: i === 0 && k === 0 ? "My car will not start" : `note ${k} from peer ${i}`,
      })),
      wait_seconds: 0,
    })
  ));
  const embedded = async () =>
    Number(
      (await readRows(
        dbPath,
        "SELECT COUNT(DISTINCT message_id) AS n FROM bus_chunks WHERE model = 'fake-model'",
      ))[0]!.n,
    );
  await until(async () => await embedded() === 60, {
    timeoutMs: 30_000,
    everyMs: 100,
    what: "all 60 messages embedded",
  });
  const documents = embed.requests.flatMap((r) => r.inputs).filter((text) =>
    !text.startsWith("query")
  );
  assert.equal(documents.length, 60, "every message was embedded exactly once");
  assert.equal(embed.maxConcurrent, 1, "never two indexers at once");
  const found = await b.ok("messages_search", { query: "automobile", mode: "semantic" });
  assert.equal((found.results as { snippet: string }[])[0]?.snippet, "My car will not start");
  await until(async () => {
    const status = (await c.ok("ping")).semantic_index as { state: string; backlog: number };
    return status.backlog === 0;
  }, { timeoutMs: 10_000, everyMs: 200, what: "ping to report an empty backlog" });
});
