/**
 * Vector scan speed: one semantic query against 100,000 vectors of 768
 * dimensions held in memory, on one core (the scan plus picking the hits).
 *
 * @module
 */

import { VectorIndex } from "../lib/search/vector_index.ts";
import { prng } from "../tests/stress/_size.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** Time `queries` searches over `count` random unit vectors of `dims` dimensions. */
export function benchVectorScan(count: number, dims: number, queries: number): Distribution {
  const random = prng(1);
  const unit = (): Float32Array => {
    const v = new Float32Array(dims);
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      v[i] = random() - 0.5;
      norm += v[i]! * v[i]!;
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
    return v;
  };
  const index = new VectorIndex("bench");
  for (let i = 0; i < count; i++) {
    index.add({ messageId: `m${i >> 1}`, topicId: "t", chunk: i & 1, start: 0, end: 1 }, unit());
  }
  const times: number[] = [];
  for (let q = 0; q < queries + 3; q++) {
    const query = unit();
    const started = performance.now();
    index.search(query, { limit: 40, minScore: 0.25 });
    if (q >= 3) times.push(performance.now() - started);
  }
  return distribution(times);
}
