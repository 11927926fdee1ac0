/**
 * An in-memory index of one model's chunk vectors, scanned by brute force
 * in two stages.
 *
 * A full scan is bound by memory bandwidth, so the index holds each vector
 * as int8 (one byte per dimension, with its own scale) in the memory of a
 * tiny WebAssembly module (dot.wat) that computes approximate dot products
 * with SIMD: a quarter of the bytes of float32, about 15 ms for 100,000
 * vectors of 768 dimensions on one core, where float32 takes 25–35 ms. The
 * chunks that come near the bar are then scored exactly against their
 * stored float32 vectors, so every reported score is exact. The error of
 * the first stage is far below the slack given to it.
 *
 * The index loads once, then only rows added since (by id); when messages
 * with vectors are deleted or edited the stored epoch moves and it reloads.
 * The caller sets the bar a hit must clear (see `calibration.ts`).
 *
 * @module
 */

import type { Store } from "../store/mod.ts";
import { chunksAfter, toFloat32, vectorsEpoch } from "../store/vectors.ts";
import { DOT_WASM_BASE64 } from "./_dot_wasm.ts";

/** How far below the bar an approximate score may be and still be checked exactly. */
export const QUANTIZATION_SLACK = 0.05;
const LOAD_BATCH = 5000;
const PAGE = 65536;
/** Rows are padded to a multiple of this many dimensions (the kernel's step). */
const ROW_ALIGN = 64;

/** Where a chunk vector comes from. */
export interface ChunkRef {
  /** The chunk's row id in bus_chunks (the key for its exact vector). */
  id: number;
  messageId: string;
  topicId: string;
  chunk: number;
  start: number;
  end: number;
}

/** A message that matched, by its best chunk. */
export interface VectorHit extends Omit<ChunkRef, "id"> {
  score: number;
}

/** Exact float32 vectors of chunks, by id. */
export type ExactVectors = (ids: readonly number[]) => Map<number, Float32Array>;

interface Kernel {
  memory: WebAssembly.Memory;
  scores(vectors: number, query: number, dims: number, count: number, out: number): void;
}

let compiled: WebAssembly.Module | undefined;

function newKernel(): Kernel {
  compiled ??= new WebAssembly.Module(
    Uint8Array.from(atob(DOT_WASM_BASE64), (c) => c.charCodeAt(0)),
  );
  const exports = new WebAssembly.Instance(compiled).exports as unknown as Kernel;
  return { memory: exports.memory, scores: exports.scores };
}

/** Brute-force cosine search over one model's vectors. */
export class VectorIndex {
  readonly model: string;
  #kernel = newKernel();
  #dims = 0;
  #stride = 0;
  #count = 0;
  #scales: Float32Array = new Float32Array(1024);
  #refs: ChunkRef[] = [];
  #lastId = 0;
  #epoch = -1;

  constructor(model: string) {
    this.model = model;
  }

  /** Number of chunk vectors held. */
  get size(): number {
    return this.#count;
  }

  /** Dimensions of the vectors (0 while empty). */
  get dims(): number {
    return this.#dims;
  }

  /** Load the vectors stored since the last refresh (all of them after a delete). */
  refresh(store: Store): void {
    store.read(() => {
      const epoch = vectorsEpoch(store);
      if (epoch !== this.#epoch) {
        this.#reset();
        this.#epoch = epoch;
      }
      for (;;) {
        const rows = chunksAfter(store, {
          model: this.model,
          afterId: this.#lastId,
          limit: LOAD_BATCH,
        });
        for (const row of rows) {
          this.add({
            id: row.id,
            messageId: row.message_id,
            topicId: row.topic_id,
            chunk: row.chunk,
            start: row.start_char,
            end: row.end_char,
          }, toFloat32(row.vector));
          this.#lastId = row.id;
        }
        if (rows.length < LOAD_BATCH) break;
      }
    });
  }

  /** Add one vector; vectors of another length than the first are ignored. */
  add(ref: ChunkRef, vector: Float32Array): void {
    if (this.#dims === 0) {
      this.#dims = vector.length;
      this.#stride = Math.ceil(vector.length / ROW_ALIGN) * ROW_ALIGN;
    }
    if (vector.length !== this.#dims) return;
    this.#ensureBytes((this.#count + 1) * this.#stride, 1.5);
    const row = new Int8Array(this.#kernel.memory.buffer, this.#count * this.#stride, this.#stride);
    this.#scales = grow(this.#scales, this.#count + 1);
    this.#scales[this.#count] = quantize(vector, row, 127);
    this.#refs.push(ref);
    this.#count++;
  }

  /**
   * The messages whose best chunk scores highest against `query`, among
   * chunks scoring at least `minScore` (exactly, from `exact`).
   *
   * @param query a unit vector from the same model
   */
  search(
    query: Float32Array,
    options: { limit: number; minScore: number; topicId?: string | undefined; exact: ExactVectors },
  ): VectorHit[] {
    const n = this.#count;
    if (n === 0 || query.length !== this.#dims) return [];
    const queryAt = n * this.#stride;
    const outAt = queryAt + this.#stride * 2;
    this.#ensureBytes(outAt + n * 4, 1);
    const memory = this.#kernel.memory.buffer;
    const query16 = new Int16Array(memory, queryAt, this.#stride);
    // Keep the integer dot product inside an int32 whatever the dimensions.
    const range = Math.min(32767, Math.floor(2 ** 31 / (128 * this.#stride)) - 1);
    const queryScale = quantize(query, query16, range);
    this.#kernel.scores(0, queryAt, this.#stride, n, outAt);
    const raw = new Int32Array(memory, outAt, n);

    // Stage 1: chunks whose approximate score comes near the bar, best first.
    const near = options.minScore - QUANTIZATION_SLACK;
    const candidates: { index: number; approx: number }[] = [];
    for (let i = 0; i < n; i++) {
      const approx = raw[i]! * this.#scales[i]! * queryScale;
      if (approx < near) continue;
      if (options.topicId !== undefined && this.#refs[i]!.topicId !== options.topicId) continue;
      candidates.push({ index: i, approx });
    }
    candidates.sort((a, b) => b.approx - a.approx);
    const checked = candidates.slice(0, Math.max(options.limit * 4, 64));

    // Stage 2: exact scores from the stored float32 vectors; best chunk per message.
    const vectors = options.exact(checked.map((c) => this.#refs[c.index]!.id));
    const best = new Map<string, VectorHit>();
    for (const { index } of checked) {
      const { id, ...ref } = this.#refs[index]!;
      const vector = vectors.get(id);
      if (!vector) continue; // deleted since the last refresh
      const score = dot(vector, query);
      if (score < options.minScore) continue;
      const previous = best.get(ref.messageId);
      if (!previous || score > previous.score) best.set(ref.messageId, { ...ref, score });
    }
    return [...best.values()].sort((a, b) => b.score - a.score).slice(0, options.limit);
  }

  #reset(): void {
    this.#kernel = newKernel();
    this.#dims = 0;
    this.#stride = 0;
    this.#count = 0;
    this.#scales = new Float32Array(1024);
    this.#refs = [];
    this.#lastId = 0;
  }

  /** At least `bytes` of kernel memory, growing by `factor` at least. */
  #ensureBytes(bytes: number, factor: number): void {
    const have = this.#kernel.memory.buffer.byteLength;
    if (bytes <= have) return;
    const want = Math.max(bytes, Math.floor(have * factor));
    this.#kernel.memory.grow(Math.ceil((want - have) / PAGE));
  }
}

/**
 * Write `vector` scaled to integers in [-range, range] into `out` (the rest
 * zeroed); returns the scale that maps them back.
 */
function quantize(vector: Float32Array, out: Int8Array | Int16Array, range: number): number {
  let max = 0;
  for (const x of vector) max = Math.max(max, Math.abs(x));
  const scale = max > 0 ? max / range : 1;
  out.fill(0);
  for (let i = 0; i < vector.length; i++) out[i] = Math.round(vector[i]! / scale);
  return scale;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function grow(array: Float32Array, size: number): Float32Array {
  if (size <= array.length) return array;
  const next = new Float32Array(Math.max(size, array.length * 2));
  next.set(array);
  return next;
}
