/**
 * The vector index: the committed WebAssembly module matches its source,
 * the two-stage scan finds what an exact scan finds with exact scores, hits
 * are per message above the bar, and the index follows the database.
 */

import assert from "node:assert/strict";
import { type ExactVectors, VectorIndex } from "../../lib/search/vector_index.ts";
import { DOT_WASM_BASE64 } from "../../lib/search/_dot_wasm.ts";
import { compileWat, moduleSource } from "../../scripts/build_wasm.ts";
import { chunkVectors, saveEmbedding } from "../../lib/store/vectors.ts";
import { openTestBus, seedTopic } from "../_helpers/bus.ts";
import { execSql } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

function randomUnit(dims: number, seed: number): Float32Array {
  let x = seed;
  return unit(Array.from({ length: dims }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648 - 0.5;
  }));
}

/** An index over `vectors`, with the exact lookup a database would give. */
function indexOf(vectors: Float32Array[], topic = (_i: number) => "t") {
  const index = new VectorIndex("m");
  vectors.forEach((v, i) =>
    index.add({ id: i + 1, messageId: `m${i}`, topicId: topic(i), chunk: 0, start: 0, end: 1 }, v)
  );
  const exact: ExactVectors = (ids) => new Map(ids.map((id) => [id, vectors[id - 1]!]));
  return { index, exact };
}

Deno.test("the committed WebAssembly module is what dot.wat compiles to", async () => {
  const source = await Deno.readTextFile(new URL("../../lib/search/dot.wat", import.meta.url));
  const bytes = await compileWat(source);
  assert.equal(btoa(String.fromCharCode(...bytes)), DOT_WASM_BASE64, "run `deno task wasm`");
  assert.match(moduleSource(bytes), /DOT_WASM_BASE64/);
});

Deno.test("VectorIndex finds what an exact scan finds, with exact scores, for any dimensions", () => {
  for (const dims of [3, 64, 100, 384, 768, 1536]) {
    const vectors = Array.from({ length: 300 }, (_, i) => randomUnit(dims, i + 1));
    const { index, exact } = indexOf(vectors);
    const query = randomUnit(dims, 999);
    const scored = vectors.map((v, i) => ({
      id: `m${i}`,
      s: v.reduce((sum, x, d) => sum + x * query[d]!, 0),
    }))
      .sort((a, b) => b.s - a.s);
    const bar = scored[9]!.s; // exactly ten chunks clear it
    const hits = index.search(query, { limit: 20, minScore: bar, exact });
    assert.deepEqual(
      hits.map((h) => h.messageId),
      scored.slice(0, 10).map((s) => s.id),
      `dims ${dims}`,
    );
    hits.forEach((hit, i) => assert.equal(hit.score, scored[i]!.s, "scores are exact"));
  }
});

Deno.test("VectorIndex returns the best chunk per message above the bar, filtered by topic", () => {
  const index = new VectorIndex("m");
  const vectors = new Map<number, Float32Array>();
  const add = (id: number, messageId: string, topicId: string, chunk: number, v: Float32Array) => {
    vectors.set(id, v);
    index.add({ id, messageId, topicId, chunk, start: chunk * 8, end: chunk * 8 + 10 }, v);
  };
  add(1, "a", "t1", 0, unit([0.6, 0.8, 0, 0]));
  add(2, "a", "t1", 1, unit([0.99, 0.1, 0, 0]));
  add(3, "b", "t2", 0, unit([0.9, 0, 0.4, 0]));
  const exact: ExactVectors = (ids) => new Map(ids.map((id) => [id, vectors.get(id)!]));
  const target = unit([1, 0, 0, 0]);
  const hits = index.search(target, { limit: 10, minScore: 0.5, exact });
  assert.deepEqual(hits.map((h) => [h.messageId, h.chunk]), [["a", 1], ["b", 0]]);
  assert.equal(hits[0]!.start, 8);
  assert.deepEqual(
    index.search(target, { limit: 10, minScore: 0.5, topicId: "t2", exact }).map((h) =>
      h.messageId
    ),
    ["b"],
  );
  assert.deepEqual(index.search(unit([0, 0, 0, 1]), { limit: 10, minScore: 0.5, exact }), []);
  assert.equal(index.search(target, { limit: 1, minScore: 0.5, exact }).length, 1);
});

Deno.test("VectorIndex.refresh loads new vectors and reloads after a deletion", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using bus = openTestBus(path);
  const topicId = await seedTopic(bus, "t", ["one", "two"]);
  const ids = bus.store.read(() =>
    bus.store.stmt("SELECT message_id FROM messages ORDER BY seq").all() as { message_id: string }[]
  ).map((r) => r.message_id);
  const save = (messageId: string, vector: Float32Array) =>
    bus.store.immediate(() =>
      saveEmbedding(bus.store, {
        model: "m",
        messageId,
        chunks: [{
          messageId,
          topicId,
          chunk: 0,
          startChar: 0,
          endChar: 3,
          vector,
        }],
        now: 1,
      })
    );
  const exact: ExactVectors = (chunkIds) => bus.store.read(() => chunkVectors(bus.store, chunkIds));
  await save(ids[0]!, unit([1, 0, 0, 0]));
  const index = new VectorIndex("m");
  index.refresh(bus.store);
  assert.equal(index.size, 1);
  await save(ids[1]!, unit([0, 1, 0, 0]));
  index.refresh(bus.store);
  assert.equal(index.size, 2, "only the new row was loaded");
  assert.equal(
    index.search(unit([0, 1, 0, 0]), { limit: 5, minScore: 0.5, exact })[0]?.messageId,
    ids[1],
  );
  await execSql(path, "DELETE FROM messages WHERE message_id = ?", ids[0]!);
  index.refresh(bus.store);
  assert.equal(index.size, 1, "a deletion reloads the index");
  assert.equal(index.search(unit([1, 0, 0, 0]), { limit: 5, minScore: 0.5, exact }).length, 0);
});
