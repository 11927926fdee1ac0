/**
 * The vector index: the WebAssembly scan agrees with plain arithmetic, the
 * committed module matches its source, hits are per message and must stand
 * out, and the index follows the database (new rows, deletions).
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { VectorIndex } from "../../lib/search/vector_index.ts";
import { DOT_WASM_BASE64 } from "../../lib/search/_dot_wasm.ts";
import { compileWat, moduleSource } from "../../scripts/build_wasm.ts";
import { saveEmbedding } from "../../lib/store/vectors.ts";
import { openTestBus, seedTopic } from "../_helpers/bus.ts";
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

Deno.test("the committed WebAssembly module is what dot.wat compiles to", async () => {
  const source = await Deno.readTextFile(new URL("../../lib/search/dot.wat", import.meta.url));
  const bytes = await compileWat(source);
  assert.equal(btoa(String.fromCharCode(...bytes)), DOT_WASM_BASE64, "run `deno task wasm`");
  assert.match(moduleSource(bytes), /DOT_WASM_BASE64/);
});

Deno.test("VectorIndex scores match plain dot products for every dimension shape", () => {
  for (const dims of [3, 4, 8, 12, 384, 768]) {
    const index = new VectorIndex("m");
    const vectors = Array.from({ length: 120 }, (_, i) => randomUnit(dims, i + 1));
    vectors.forEach((v, i) =>
      index.add({ messageId: `m${i}`, topicId: "t", chunk: 0, start: 0, end: 1 }, v)
    );
    const query = randomUnit(dims, 999);
    const hits = index.search(query, { limit: 5, minScore: -1 });
    const expected = vectors.map((v, i) => ({
      i,
      s: v.reduce((sum, x, d) => sum + x * query[d]!, 0),
    }))
      .sort((a, b) => b.s - a.s);
    for (const hit of hits) {
      const reference = expected.find((e) => `m${e.i}` === hit.messageId)!;
      assert.ok(Math.abs(reference.s - hit.score) < 1e-4, `dims ${dims}`);
    }
    if (hits.length > 0) assert.equal(hits[0]!.messageId, `m${expected[0]!.i}`);
  }
});

Deno.test("VectorIndex returns the best chunk per message above the bar, filtered by topic", () => {
  const index = new VectorIndex("m");
  const target = unit([1, 0, 0, 0]);
  index.add({ messageId: "a", topicId: "t1", chunk: 0, start: 0, end: 10 }, unit([0.6, 0.8, 0, 0]));
  index.add(
    { messageId: "a", topicId: "t1", chunk: 1, start: 8, end: 20 },
    unit([0.99, 0.1, 0, 0]),
  );
  index.add({ messageId: "b", topicId: "t2", chunk: 0, start: 0, end: 10 }, unit([0.9, 0, 0.4, 0]));
  const hits = index.search(target, { limit: 10, minScore: 0.5 });
  assert.deepEqual(hits.map((h) => [h.messageId, h.chunk]), [["a", 1], ["b", 0]]);
  assert.deepEqual(
    index.search(target, { limit: 10, minScore: 0.5, topicId: "t2" }).map((h) => h.messageId),
    ["b"],
  );
  assert.deepEqual(index.search(unit([0, 0, 0, 1]), { limit: 10, minScore: 0.5 }), []);
});

Deno.test("VectorIndex.refresh loads new vectors and reloads after a deletion", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  using bus = openTestBus(path);
  const topicId = await seedTopic(bus, "t", ["one", "two"]);
  const ids = bus.store.read(() =>
    bus.store.stmt("SELECT message_id FROM messages ORDER BY seq").all() as { message_id: string }[]
  ).map((r) => r.message_id);
  const save = (messageId: string, vector: Float32Array) =>
    bus.store.immediate(() =>
      saveEmbedding(bus.store, "m", messageId, [{
        messageId,
        topicId,
        chunk: 0,
        startChar: 0,
        endChar: 3,
        vector,
      }], 1)
    );
  await save(ids[0]!, unit([1, 0, 0, 0]));
  const index = new VectorIndex("m");
  index.refresh(bus.store);
  assert.equal(index.size, 1);
  await save(ids[1]!, unit([0, 1, 0, 0]));
  index.refresh(bus.store);
  assert.equal(index.size, 2, "only the new row was loaded");
  const raw = new DatabaseSync(path);
  raw.prepare("DELETE FROM messages WHERE message_id = ?").run(ids[0]!);
  raw.close();
  index.refresh(bus.store);
  assert.equal(index.size, 1, "a deletion reloads the index");
  assert.equal(index.search(unit([1, 0, 0, 0]), { limit: 5, minScore: 0.5 }).length, 0);
});
