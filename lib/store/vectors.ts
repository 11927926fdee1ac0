/**
 * SQL for the semantic index: chunk vectors per (message, model, chunk),
 * which messages each model has processed, and how far indexing has come.
 *
 * Vectors are float32, little-endian, unit length, stored as BLOBs. The
 * indexer walks messages by rowid in two directions from where it started:
 * up for new messages (`high_water`) and down for old ones (`low_water`),
 * newest first, so a large existing history becomes searchable from its
 * recent end. Any process can tell cheaply whether work is left by
 * comparing those marks with the messages table's rowid range.
 *
 * @module
 */

import type { Store } from "./types.ts";

/** A chunk vector as stored. */
export interface ChunkRow {
  id: number;
  message_id: string;
  topic_id: string;
  chunk: number;
  start_char: number;
  end_char: number;
  vector: Uint8Array;
}

/** A chunk to store. */
export interface NewChunk {
  messageId: string;
  topicId: string;
  chunk: number;
  startChar: number;
  endChar: number;
  vector: Float32Array;
}

/** A message waiting to be embedded. */
export interface PendingMessage {
  rowid: number;
  message_id: string;
  topic_id: string;
  content_markdown: string;
}

/** How far indexing has come for one model. */
export interface Progress {
  highWater: number;
  lowWater: number;
}

/** Chunks of `model` with id above `afterId`, oldest first, at most `limit`. */
export function chunksAfter(
  store: Store,
  { model, afterId, limit }: { model: string; afterId: number; limit: number },
): ChunkRow[] {
  return store.stmt(
    `SELECT id, message_id, topic_id, chunk, start_char, end_char, vector FROM bus_chunks
     WHERE model = ? AND id > ? ORDER BY id LIMIT ?`,
  ).all<ChunkRow>(model, afterId, limit);
}

/** Changes whenever messages with vectors are deleted or edited (the in-memory index reloads). */
export function vectorsEpoch(store: Store): number {
  const row = store.stmt("SELECT value FROM meta WHERE key = 'bus_vectors_epoch'").get() as
    | { value: string }
    | undefined;
  return Number(row?.value ?? 0);
}

/** Store the chunks of one message and mark it done for `model`. */
export function saveEmbedding(
  store: Store,
  { model, messageId, chunks, now }: {
    model: string;
    messageId: string;
    chunks: readonly NewChunk[];
    now: number;
  },
): void {
  const insert = store.stmt(
    `INSERT OR REPLACE INTO bus_chunks (message_id, model, chunk, topic_id, start_char, end_char, vector)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const c of chunks) {
    const bytes = new Uint8Array(c.vector.buffer, c.vector.byteOffset, c.vector.byteLength);
    insert.run(c.messageId, model, c.chunk, c.topicId, c.startChar, c.endChar, bytes);
  }
  markEmbedState(store, { model, messageId, status: "done", error: null, now });
}

/** Record that a message was processed (`done`) or could not be (`error`) for `model`. */
export function markEmbedState(
  store: Store,
  state: {
    model: string;
    messageId: string;
    status: "done" | "error";
    error: string | null;
    now: number;
  },
): void {
  store.stmt(
    `INSERT INTO bus_embed_state (message_id, model, status, attempts, error, updated_at)
     VALUES (?, ?, ?, 1, ?, ?)
     ON CONFLICT (message_id, model) DO UPDATE SET status = excluded.status,
       attempts = bus_embed_state.attempts + 1, error = excluded.error, updated_at = excluded.updated_at`,
  ).run(state.messageId, state.model, state.status, state.error, state.now);
}

/** The message rowid range (0, 0 when there are no messages). */
export function messageRowidRange(store: Store): { min: number; max: number } {
  const row = store.stmt(
    "SELECT COALESCE(MIN(rowid), 0) AS min, COALESCE(MAX(rowid), 0) AS max FROM messages",
  ).get<{ min: number; max: number }>()!;
  return row;
}

/** The progress of `model`, if indexing ever started. */
export function getProgress(store: Store, model: string): Progress | undefined {
  const row = store.stmt("SELECT high_water, low_water FROM bus_index_progress WHERE model = ?")
    .get<{ high_water: number; low_water: number }>(model);
  return row ? { highWater: row.high_water, lowWater: row.low_water } : undefined;
}

/** Save the progress of `model`. */
export function setProgress(
  store: Store,
  { model, progress, now }: { model: string; progress: Progress; now: number },
): void {
  store.stmt(
    `INSERT INTO bus_index_progress (model, high_water, low_water, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (model) DO UPDATE SET high_water = excluded.high_water,
       low_water = excluded.low_water, updated_at = excluded.updated_at`,
  ).run(model, progress.highWater, progress.lowWater, now);
}

/** Unprocessed messages with rowid above `after`, lowest first. */
export function pendingAbove(
  store: Store,
  { model, after, limit }: { model: string; after: number; limit: number },
): PendingMessage[] {
  return store.stmt(
    `SELECT m.rowid AS rowid, m.message_id, m.topic_id, m.content_markdown FROM messages AS m
     WHERE m.rowid > ? AND NOT EXISTS (
       SELECT 1 FROM bus_embed_state AS s WHERE s.message_id = m.message_id AND s.model = ?)
     ORDER BY m.rowid LIMIT ?`,
  ).all<PendingMessage>(after, model, limit);
}

/** Unprocessed messages with rowid below `before`, highest (newest) first. */
export function pendingBelow(
  store: Store,
  { model, before, limit }: { model: string; before: number; limit: number },
): PendingMessage[] {
  return store.stmt(
    `SELECT m.rowid AS rowid, m.message_id, m.topic_id, m.content_markdown FROM messages AS m
     WHERE m.rowid < ? AND NOT EXISTS (
       SELECT 1 FROM bus_embed_state AS s WHERE s.message_id = m.message_id AND s.model = ?)
     ORDER BY m.rowid DESC LIMIT ?`,
  ).all<PendingMessage>(before, model, limit);
}

/** Messages processed for `model`, and how many of them failed. */
export function embedCounts(store: Store, model: string): { done: number; failed: number } {
  const row = store.stmt(
    `SELECT COUNT(*) AS done, COALESCE(SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END), 0) AS failed
     FROM bus_embed_state WHERE model = ?`,
  ).get<{ done: number; failed: number }>(model)!;
  return row;
}

/** Number of messages. */
export function messageCount(store: Store): number {
  return store.stmt("SELECT COUNT(*) AS n FROM messages").get<{ n: number }>()!.n;
}

/** The stored float32 vectors of these chunks, by chunk id. */
export function chunkVectors(store: Store, ids: readonly number[]): Map<number, Float32Array> {
  const rows = store.stmt(
    "SELECT id, vector FROM bus_chunks WHERE id IN (SELECT CAST(value AS INTEGER) FROM json_each(?))",
  ).all<{ id: number; vector: Uint8Array }>(JSON.stringify(ids));
  return new Map(rows.map((row) => [row.id, toFloat32(row.vector)]));
}

/** A float32 vector from its stored bytes (copied, so it is aligned and owned). */
export function toFloat32(bytes: Uint8Array): Float32Array {
  return new Float32Array(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  );
}
