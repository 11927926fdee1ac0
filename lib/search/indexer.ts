/**
 * Background index upkeep: full-text rows of new messages (SQLite writes
 * them after the send, see `store/search.ts`), code terms for rows other
 * programs wrote, and chunk vectors for semantic search.
 *
 * Every server process runs this loop, but only one at a time embeds (the
 * holder of the `embeddings` lease) and only one writes full-text rows (the
 * holder of `full-text`); a lease expires if its holder dies. A
 * round first looks, with reads only, for work: unindexed messages, queued
 * terms rows, or messages beyond the index's high or low water mark. Only when there is
 * work, and the endpoint is not benched, does it write (claim the lease,
 * store vectors). So an idle bus, or one without an embedding endpoint,
 * costs a couple of cheap reads a second and no writes. On a store that
 * pushes commits (PostgreSQL), the process that indexes (the last to hold a
 * lease) waits for the next commit instead, so an idle process sends no
 * query at all; the others do not wake for commits, only look in every
 * {@linkcode TAKEOVER_MS} in case it stopped; nor does anyone while the
 * embedding endpoint is benched. The index's writes take the bus lock
 * shared ({@linkcode UPKEEP}): they never hold up a send.
 *
 * Embedding happens outside any transaction; each batch is then stored in
 * one short transaction that also moves the water marks and renews the
 * lease. The send path never waits for any of it.
 *
 * @module
 */

import type { EmbeddingsConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import { claimLease, leaseHolder, releaseLease } from "../store/leases.ts";
import type { Store } from "../store/mod.ts";
import {
  catchUpIndex,
  hasPendingTerms,
  hasUnindexed,
  pendingTerms,
  setTerms,
} from "../store/search.ts";
import { codeTerms } from "../store/terms.ts";
import {
  embedCounts,
  getProgress,
  markEmbedState,
  messageCount,
  messageRowidRange,
  type NewChunk,
  pendingAbove,
  pendingBelow,
  type PendingMessage,
  type Progress,
  saveEmbedding,
  setProgress,
} from "../store/vectors.ts";
import { type Chunk, chunkText } from "./chunk.ts";
import { EmbeddingsClient, EmbeddingsError } from "./embeddings.ts";

/** The lease that makes one process the embedder. */
export const LEASE = "embeddings";
/** The lease that makes one process write the full-text rows of new messages. */
const FULL_TEXT_LEASE = "full-text";
/** How long a lease lives without renewal. */
const LEASE_SECONDS = 30;
/** Messages embedded per batch. */
const BATCH = 16;
/** Pause between rounds when there was nothing to do. */
const IDLE_MS = 1000;
/**
 * The index's own writes: scoped to no topic, so on PostgreSQL they take the
 * bus lock shared (writers of topics never wait for them) and wake nobody.
 */
const UPKEEP = { topics: [] } as const;
/**
 * How often a process that does not index looks whether the indexer
 * stopped (its lease then expires) and there is work to take over.
 */
const TAKEOVER_MS = (LEASE_SECONDS * 1000) / 2;

/** What the semantic index looks like from this process. */
export interface IndexStatus {
  model: string;
  state: "starting" | "disabled" | "idle" | "indexing" | "unavailable" | "another process indexes";
  /** Messages with vectors (or given up on) for the model. */
  indexed: number;
  failed: number;
  /** Messages still without vectors. */
  backlog: number;
  endpoint: ReturnType<EmbeddingsClient["status"]>;
  /** Unix seconds of the last update of this snapshot. */
  updatedAt: number;
}

/** Options of {@linkcode Indexer}. */
export interface IndexerOptions {
  store: Store;
  config: EmbeddingsConfig;
  embeddings: EmbeddingsClient;
  log: Logger;
  now?: () => number;
}

/** The per-process upkeep loop. */
export class Indexer {
  readonly #store: Store;
  readonly #config: EmbeddingsConfig;
  readonly #embeddings: EmbeddingsClient;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #holder = `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  #status: IndexStatus;
  /**
   * Whether this process is the one that indexes: it held a lease last, and
   * has not seen another process take one since.
   */
  #leading = false;

  constructor(options: IndexerOptions) {
    this.#store = options.store;
    this.#config = options.config;
    this.#embeddings = options.embeddings;
    this.#log = options.log;
    this.#now = options.now ?? (() => Date.now() / 1000);
    this.#status = {
      model: this.#config.model,
      state: this.#config.autoindex ? "starting" : "disabled",
      indexed: 0,
      failed: 0,
      backlog: 0,
      endpoint: this.#embeddings.status(),
      updatedAt: 0,
    };
  }

  /** The latest snapshot (no database access). */
  status(): IndexStatus {
    return { ...this.#status, endpoint: this.#embeddings.status() };
  }

  /** Start the loop (it keeps the process alive only while a round runs). */
  start(): void {
    this.#schedule(0);
  }

  /** Stop the loop and give up the lease. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    try {
      await this.#store.immediate(() => {
        releaseLease(this.#store, { name: LEASE, holder: this.#holder });
        releaseLease(this.#store, { name: FULL_TEXT_LEASE, holder: this.#holder });
      }, UPKEEP);
    } catch {
      // The database is gone or closed: the lease expires on its own.
    }
  }

  /**
   * One round of upkeep.
   *
   * @returns true when it did work (another round should follow soon)
   */
  async runOnce(): Promise<boolean> {
    if (this.#store.check()) return false;
    let worked = await this.#catchUpFullText();
    worked = (await this.#drainTerms()) || worked;
    if (this.#config.autoindex) worked = (await this.#embedRound()) || worked;
    return worked;
  }

  /** Refresh the counts of the status snapshot (a few reads). */
  refreshCounts(): void {
    const model = this.#config.model;
    const { done, failed, total } = this.#store.read(() => ({
      ...embedCounts(this.#store, model),
      total: messageCount(this.#store),
    }));
    Object.assign(this.#status, {
      indexed: done,
      failed,
      backlog: Math.max(0, total - done),
      updatedAt: this.#now(),
    });
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.runOnce()
        .catch((error) => {
          this.#log.warn("Index upkeep failed; will retry", { error: String(error) });
          return false;
        })
        .then((worked) => {
          if (worked) this.#schedule(0);
          else if (!this.#store.subscribe) this.#schedule(IDLE_MS);
          else if (this.#status.state === "unavailable") {
            // The endpoint is benched: nothing to do before its retry time, whatever commits.
            this.#schedule(
              Math.min(this.#embeddings.status().retryInMs ?? TAKEOVER_MS, TAKEOVER_MS),
            );
          } else if (this.#leading && this.#nothingPending()) {
            // The process that indexes hears of new messages at once; the others only look in
            // now and then, in case it stopped.
            this.#scheduleOnCommit(TAKEOVER_MS);
          } else this.#schedule(this.#leading ? IDLE_MS : TAKEOVER_MS);
        });
    }, delayMs);
    Deno.unrefTimer(this.#timer);
  }

  /** True when the last round found no work that time alone could unblock. */
  #nothingPending(): boolean {
    return this.#status.state === "idle" || this.#status.state === "disabled" ||
      this.#status.state === "starting";
  }

  /**
   * Run the next round after the next commit of any process (or after
   * `atMostMs`), but not sooner than `IDLE_MS` after this one: under load
   * that is a round a second, as on SQLite, not one per commit.
   */
  #scheduleOnCommit(atMostMs?: number): void {
    let done = false;
    const earliest = performance.now() + IDLE_MS;
    const run = () => {
      if (done) return;
      done = true;
      off();
      clearTimeout(this.#timer);
      this.#schedule(Math.max(0, earliest - performance.now()));
    };
    const off = this.#store.subscribe!(run);
    if (atMostMs !== undefined) {
      this.#timer = setTimeout(run, atMostMs);
      Deno.unrefTimer(this.#timer);
    }
  }

  /**
   * Write the full-text rows of new messages, if this process holds the
   * `full-text` lease (one indexer per bus, not one per process doing the
   * same rows; a search still catches up itself, whoever holds it).
   */
  async #catchUpFullText(): Promise<boolean> {
    if (!this.#store.read(() => hasUnindexed(this.#store))) return false;
    const now = this.#now();
    const holder = this.#store.read(() => leaseHolder(this.#store, { name: FULL_TEXT_LEASE, now }));
    if (holder !== undefined && holder !== this.#holder) {
      this.#leading = false;
      return false;
    }
    return (await this.#claim(FULL_TEXT_LEASE, now)) && (await catchUpIndex(this.#store)) > 0;
  }

  /** Take or renew the lease `name` for this process (one short write). */
  async #claim(name: string, now: number): Promise<boolean> {
    const taken = await this.#store.immediate(
      () =>
        claimLease(this.#store, {
          name,
          holder: this.#holder,
          now,
          expiresAt: now + LEASE_SECONDS,
        }),
      UPKEEP,
    );
    this.#leading = taken;
    return taken;
  }

  async #drainTerms(): Promise<boolean> {
    if (!this.#store.read(() => hasPendingTerms(this.#store))) return false;
    const rows = this.#store.read(() => pendingTerms(this.#store, 200));
    // Derived before the write lock is taken: the lock is held only for the updates.
    const terms = rows.map((row) => codeTerms(row.content));
    await this.#store.immediate(() => {
      rows.forEach((row, i) => setTerms(this.#store, { rowid: row.rowid, terms: terms[i]! }));
    }, UPKEEP);
    return rows.length > 0;
  }

  async #embedRound(): Promise<boolean> {
    if (!this.#embeddings.available()) {
      this.#status.state = "unavailable";
      return false;
    }
    const model = this.#config.model;
    const { progress, range, holder } = this.#store.read(() => ({
      progress: getProgress(this.#store, model),
      range: messageRowidRange(this.#store),
      holder: leaseHolder(this.#store, { name: LEASE, now: this.#now() }),
    }));
    const start = progress ?? { highWater: range.max, lowWater: range.max + 1 };
    const hasWork = range.max > start.highWater || (range.max > 0 && start.lowWater > range.min);
    if (!hasWork) {
      if (this.#status.state !== "idle" || this.#status.updatedAt === 0) {
        this.#status.state = "idle";
        this.refreshCounts();
      }
      if (holder === this.#holder) {
        await this.#store.immediate(
          () => releaseLease(this.#store, { name: LEASE, holder: this.#holder }),
          UPKEEP,
        );
      }
      return false;
    }
    if (holder !== undefined && holder !== this.#holder) {
      this.#status.state = "another process indexes";
      this.#leading = false;
      return false;
    }
    const now = this.#now();
    if (!(await this.#claim(LEASE, now))) {
      this.#status.state = "another process indexes";
      return false;
    }
    this.#status.state = "indexing";
    return await this.#embedBatch(model, start, range.min);
  }

  /** Embed one batch of pending messages, newest arrivals first, then history downward. */
  async #embedBatch(model: string, start: Progress, minRowid: number): Promise<boolean> {
    const upward = this.#store.read(() =>
      pendingAbove(this.#store, { model, after: start.highWater, limit: BATCH })
    );
    const batch = upward.length > 0
      ? upward
      : this.#store.read(() =>
        pendingBelow(this.#store, { model, before: start.lowWater, limit: BATCH })
      );
    const progress: Progress = { ...start };
    if (upward.length > 0) {
      progress.highWater = Math.max(start.highWater, ...upward.map((m) => m.rowid));
    } else if (batch.length > 0) {
      progress.lowWater = Math.min(...batch.map((m) => m.rowid));
    } else {
      // Everything between the marks was done by an earlier holder: close the gaps.
      progress.highWater = Math.max(
        start.highWater,
        this.#store.read(() => messageRowidRange(this.#store)).max,
      );
      progress.lowWater = Math.min(start.lowWater, minRowid);
    }
    let results: { message: PendingMessage; chunks: NewChunk[] | string }[];
    try {
      results = await this.#embedMessages(model, batch);
    } catch (error) {
      if (error instanceof EmbeddingsError && error.kind === "unavailable") {
        this.#status.state = "unavailable";
        this.#log.info("Semantic indexing paused: the embedding endpoint is unavailable", {
          error: error.message,
        });
        return false;
      }
      throw error;
    }
    const now = this.#now();
    await this.#store.immediate(() => {
      for (const { message, chunks } of results) {
        if (typeof chunks === "string") {
          markEmbedState(this.#store, {
            model,
            messageId: message.message_id,
            status: "error",
            error: chunks,
            now,
          });
        } else {
          saveEmbedding(this.#store, { model, messageId: message.message_id, chunks, now });
        }
      }
      setProgress(this.#store, { model, progress, now });
      claimLease(this.#store, {
        name: LEASE,
        holder: this.#holder,
        now,
        expiresAt: now + LEASE_SECONDS,
      });
    }, UPKEEP);
    this.refreshCounts();
    return true;
  }

  /** Vectors for each message's chunks; a string instead when the endpoint refused that message. */
  async #embedMessages(
    model: string,
    messages: PendingMessage[],
  ): Promise<{ message: PendingMessage; chunks: NewChunk[] | string }[]> {
    const chunked = messages.map((message) => ({
      message,
      pieces: chunkText(message.content_markdown, {
        size: this.#config.chunkChars,
        overlap: this.#config.chunkOverlap,
      }),
    }));
    const texts = chunked.flatMap((c) => c.pieces.map((p) => p.text));
    let vectors: Float32Array[] | undefined;
    try {
      vectors = texts.length > 0
        ? await this.#embeddings.embed(texts, { model, kind: "document" })
        : [];
    } catch (error) {
      if (!(error instanceof EmbeddingsError) || error.kind !== "rejected") throw error;
    }
    if (vectors) {
      let next = 0;
      return chunked.map(({ message, pieces }) => {
        const own = vectors!.slice(next, next += pieces.length);
        return { message, chunks: toChunks(message, pieces, own) };
      });
    }
    // The batch was refused: find the messages that cause it, one at a time.
    const results: { message: PendingMessage; chunks: NewChunk[] | string }[] = [];
    for (const { message, pieces } of chunked) {
      try {
        const own = await this.#embeddings.embed(pieces.map((p) => p.text), {
          model,
          kind: "document",
        });
        results.push({ message, chunks: toChunks(message, pieces, own) });
      } catch (error) {
        if (!(error instanceof EmbeddingsError) || error.kind !== "rejected") throw error;
        results.push({ message, chunks: error.message });
      }
    }
    return results;
  }
}

function toChunks(message: PendingMessage, pieces: Chunk[], vectors: Float32Array[]): NewChunk[] {
  return pieces.map((piece, chunk) => ({
    messageId: message.message_id,
    topicId: message.topic_id,
    chunk,
    startChar: piece.start,
    endChar: piece.end,
    vector: vectors[chunk]!,
  }));
}
