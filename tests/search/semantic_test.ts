/**
 * Semantic and hybrid search against a real HTTP embedding endpoint running
 * in the test (deterministic vectors, see tests/_helpers/embed_server.ts):
 * semantic-only matches, fallback and recovery, partial indexes, model
 * changes.
 */

import assert from "node:assert/strict";
import type { SearchArgs, SearchEngine } from "../../lib/search/mod.ts";
import { indexAll, openTestBus, openTestSearch, seedTopic } from "../_helpers/bus.ts";
import { startFakeEmbedServer } from "../_helpers/embed_server.ts";
import { until } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const BODIES = [
  "My car broke down on the highway this morning",
  "The quarterly report is due on Friday",
  "Lunch is at noon in the cafeteria",
  "The build server rebooted overnight",
  "Please review the onboarding checklist",
];

/** A temp bus holding BODIES, fully indexed through a fake endpoint. Dispose to clean up. */
async function indexedScene(api?: "openai") {
  const tmp = await tmpDir();
  const embed = startFakeEmbedServer(api ? { api } : {});
  const bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const engine = openTestSearch(bus, { AGENT_BUS_EMBEDDINGS_URL: embed.url });
  await seedTopic(bus, "t", BODIES);
  await indexAll(engine);
  return {
    bus,
    embed,
    engine,
    async [Symbol.asyncDispose]() {
      await engine[Symbol.asyncDispose]();
      await bus[Symbol.asyncDispose]();
      await embed[Symbol.asyncDispose]();
      await tmp[Symbol.asyncDispose]();
    },
  };
}

function search(engine: SearchEngine, more: Partial<SearchArgs>) {
  return engine.search({ query: "", mode: "hybrid", limit: 10, includeContent: true, ...more });
}

Deno.test("hybrid search surfaces a message that matches in meaning but not in words", async () => {
  await using scene = await indexedScene();
  const { engine } = scene;
  assert.equal(
    (await search(engine, { query: "automobile", mode: "fts" })).count,
    0,
    "no word matches",
  );
  const hybrid = await search(engine, { query: "automobile" });
  assert.deepEqual(hybrid.warnings, []);
  assert.equal(hybrid.results[0]?.content_markdown, BODIES[0]);
  assert.equal(hybrid.results[0]?.fts_rank, null);
  assert.ok((hybrid.results[0]?.semantic_score ?? 0) > 0.25);
  assert.equal(typeof hybrid.results[0]?.score, "number");
  const both = await search(engine, { query: "car highway" });
  assert.equal(both.results[0]?.content_markdown, BODIES[0]);
  assert.equal(
    typeof both.results[0]?.fts_rank,
    "number",
    "a message found both ways has both scores",
  );
  assert.equal(typeof both.results[0]?.semantic_score, "number");
  assert.match(both.results[0]!.snippet, /«car»/);
});

Deno.test("semantic mode returns nothing for a query that means nothing here", async () => {
  await using scene = await indexedScene();
  const { engine } = scene;
  const nonsense = await search(engine, { query: "zxqv wpfk jjjj", mode: "semantic" });
  assert.equal(nonsense.count, 0);
  const meaningful = await search(engine, { query: "vehicle", mode: "semantic" });
  assert.equal(meaningful.results[0]?.content_markdown, BODIES[0]);
  assert.equal(meaningful.results[0]?.fts_rank, null);
});

Deno.test("with the endpoint down, search falls back to full text, then recovers by itself", async () => {
  await using tmp = await tmpDir();
  const embed = startFakeEmbedServer();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using engine = openTestSearch(bus, {
    AGENT_BUS_EMBEDDINGS_URL: embed.url,
    AGENT_BUS_EMBEDDINGS_RETRY_SECONDS: "1",
  });
  await seedTopic(bus, "t", BODIES);
  await embed.stop();
  for (const mode of ["hybrid", "semantic"] as const) {
    const down = await search(engine, { query: "car", mode });
    assert.equal(
      down.results[0]?.content_markdown,
      BODIES[0],
      `${mode} still answers with full text`,
    );
    assert.equal(down.warnings[0]?.code, "semantic_unavailable");
    assert.equal(down.warnings[0]?.context?.url, embed.url);
  }
  const probes = embed.requests.length;
  await search(engine, { query: "car" });
  assert.equal(embed.requests.length, probes, "a benched endpoint is not asked again at once");
  embed.start();
  await until(async () => {
    await engine.indexer.runOnce();
    return (await search(engine, { query: "automobile" })).results[0]?.content_markdown ===
      BODIES[0];
  }, { timeoutMs: 10_000, everyMs: 200, what: "semantic search to come back" });
  await embed.stop();
});

Deno.test("an incomplete index gives partial results with the backlog in a warning", async () => {
  await using scene = await indexedScene();
  const { bus, engine } = scene;
  await seedTopic(bus, "t", Array.from({ length: 40 }, (_, i) => `later note ${i}`));
  await engine.indexer.runOnce(); // one batch of 16, 24 left
  const partial = await search(engine, { query: "automobile", mode: "semantic" });
  assert.equal(partial.results[0]?.content_markdown, BODIES[0]);
  const warning = partial.warnings.find((w) => w.code === "semantic_partial");
  assert.equal(warning?.context?.backlog, 24);
  await indexAll(engine);
  assert.deepEqual((await search(engine, { query: "automobile", mode: "semantic" })).warnings, []);
});

Deno.test("changing the model re-indexes every message for it", async () => {
  await using tmp = await tmpDir();
  await using embed = startFakeEmbedServer();
  const path = `${tmp.path}/bus.sqlite`;
  await using bus = openTestBus(path);
  {
    await using first = openTestSearch(bus, {
      AGENT_BUS_EMBEDDINGS_URL: embed.url,
      AGENT_BUS_EMBEDDING_MODEL: "model-a",
    });
    await seedTopic(bus, "t", BODIES);
    await indexAll(first);
  }
  const before = embed.requests.length;
  await using second = openTestSearch(bus, {
    AGENT_BUS_EMBEDDINGS_URL: embed.url,
    AGENT_BUS_EMBEDDING_MODEL: "model-b",
  });
  await indexAll(second);
  const embedded = embed.requests.slice(before).filter((r) => r.model === "model-b")
    .flatMap((r) => r.inputs);
  assert.equal(embedded.length, BODIES.length, "every message embedded again with model-b");
  const result = await search(second, { query: "automobile", mode: "semantic" });
  assert.equal(result.results[0]?.content_markdown, BODIES[0]);
  assert.deepEqual(result.warnings, []);
  assert.equal(second.status().model, "model-b");
  assert.equal(second.status().indexed, BODIES.length);
});

Deno.test("an endpoint without Ollama's route is used through the OpenAI format", async () => {
  await using scene = await indexedScene("openai");
  const { embed, engine } = scene;
  assert.equal(
    (await search(engine, { query: "automobile" })).results[0]?.content_markdown,
    BODIES[0],
  );
  assert.equal(engine.embeddings.status().api, "openai");
  assert.ok(embed.requests.every((r) => r.route === "openai"));
});
