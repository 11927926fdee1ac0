/**
 * Vector scan speed: one semantic query against 100,000 vectors of 768
 * dimensions, on one core, through the real index: the int8 scan of every
 * vector, then exact scores for the candidates from their float32 vectors
 * stored in SQLite.
 *
 * @module
 */

import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/log.ts";
import { openRuntime } from "../lib/runtime.ts";
import { VectorIndex } from "../lib/search/vector_index.ts";
import { chunkVectors, saveEmbedding } from "../lib/store/vectors.ts";
import { prng } from "../tests/stress/_size.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** Time `queries` searches over `count` random unit vectors of `dims` dimensions. */
export async function benchVectorScan(
  dir: string,
  options: { count: number; dims: number; queries: number },
): Promise<Distribution> {
  const { count, dims, queries } = options;
  const random = prng(1);
  const unit = (base?: Float32Array): Float32Array => {
    const v = new Float32Array(dims);
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      v[i] = (base ? base[i]! * 8 : 0) + random() - 0.5;
      norm += v[i]! * v[i]!;
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
    return v;
  };
  const { config } = loadConfig({ AGENT_BUS_DB: `${dir}/vectors.sqlite` });
  await using runtime = openRuntime(config, { log: createLogger("error") });
  const { store } = runtime;
  const stored: Float32Array[] = [];
  for (let start = 0; start < count; start += 10_000) {
    await store.immediate(() => {
      for (let i = start; i < Math.min(count, start + 10_000); i++) {
        const vector = unit();
        if (i % 1000 === 0) stored.push(vector);
        const messageId = `m${i}`;
        saveEmbedding(store, {
          model: "bench",
          messageId,
          chunks: [
            { messageId, topicId: "t", chunk: 0, startChar: 0, endChar: 1, vector },
          ],
          now: 1,
        });
      }
    });
  }
  const index = new VectorIndex("bench");
  index.refresh(store);
  const exact = (ids: readonly number[]) => store.read(() => chunkVectors(store, ids));
  const times: number[] = [];
  for (let q = 0; q < queries + 3; q++) {
    const query = unit(stored[q % stored.length]); // near one stored vector, like a real match
    const started = performance.now();
    const hits = index.search(query, { limit: 20, minScore: 0.3, exact });
    if (q >= 3) times.push(performance.now() - started);
    if (hits.length === 0) throw new Error("the vector scan found nothing near a stored vector");
  }
  return distribution(times);
}
