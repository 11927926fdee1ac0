/**
 * `messages_search`: find messages across topics (seed section 4.7), by
 * words (`fts`), by meaning (`semantic`), or both fused (`hybrid`).
 *
 * Full-text search runs on `bus_fts` (body with stemming, plus code terms):
 * every meaningful word must match, and when that finds nothing, any word
 * may. Semantic search embeds the query with the optional local endpoint
 * and scans the chunk vectors the background indexer stored. Hybrid merges
 * the two candidate lists with Reciprocal Rank Fusion, so a message that
 * matches in meaning but shares no word with the query still appears.
 *
 * A semantic hit must be more similar to the query than a set of unrelated
 * reference texts are (`calibration.ts`), so a query that means nothing
 * here finds nothing. Nothing here fails for want of embeddings: with the endpoint down, every
 * mode returns the full-text results with a `semantic_unavailable` warning;
 * with the index still filling, semantic results come with a
 * `semantic_partial` warning that says how many messages are left.
 *
 * @module
 */

import { countWithinBudget } from "../budget.ts";
import { counted } from "../strings.ts";
import type { ResolvedConfig } from "../config.ts";
import { invalidArgument, type Warning } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import {
  type FtsHit,
  ftsSearch,
  type MessageForResult,
  messagesForResults,
  type SearchFilters,
} from "../store/search.ts";
import { chunkVectors, getProgress, messageRowidRange } from "../store/vectors.ts";
import { REFERENCE_TEXTS, semanticBar } from "./calibration.ts";
import { EmbeddingsClient, EmbeddingsError } from "./embeddings.ts";
import { highlightTerms, toFtsExpressions } from "./fts_query.ts";
import { reciprocalRankFusion } from "./fusion.ts";
import { Indexer, type IndexStatus } from "./indexer.ts";
import { markedSnippet } from "./snippet.ts";
import { type VectorHit, VectorIndex } from "./vector_index.ts";

/** Search modes of the seed. */
export type SearchMode = "hybrid" | "fts" | "semantic";

/** Most results one search returns. */
export const MAX_SEARCH_LIMIT = 100;
/** Longest query accepted. */
export const MAX_QUERY_CHARS = 16384;
/** A vector index unused this long is dropped to free its memory. */
const INDEX_IDLE_MS = 10 * 60_000;
/** Matches a query of stop words only is ranked among: the most recent ones. */
const BROAD_QUERY_CANDIDATES = 5000;
/** Longest wait for the query's embedding. */
const QUERY_EMBED_TIMEOUT_MS = 3000;

/** Arguments of {@linkcode SearchEngine.search}. */
export interface SearchArgs extends SearchFilters {
  query: string;
  mode: SearchMode;
  limit: number;
  model?: string | undefined;
  includeContent: boolean;
}

/** One result. Which score fields are set depends on the mode. */
export interface SearchHit extends Omit<FtsHit, "rank" | "content_markdown"> {
  /** A window of the body around the first hit, hits marked. */
  snippet: string;
  /** bm25 (fts mode; lower is better). */
  rank?: number;
  /** bm25 of the full-text match, or null (hybrid and semantic modes). */
  fts_rank?: number | null;
  /** Cosine similarity of the best chunk, or null. */
  semantic_score?: number | null;
  /** Fused score (hybrid mode; higher is better). */
  score?: number;
  content_markdown?: string;
}

/** `messages_search`'s structured output. */
export interface SearchResult {
  query: string;
  mode: SearchMode;
  topic_id: string | null;
  include_content: boolean;
  results: SearchHit[];
  count: number;
  warnings: Warning[];
}

/** Options of one search. */
export interface SearchOptions {
  /**
   * Markers around matched words in snippets. The default, « and », reads
   * well for models and people and, unlike Markdown bold, does not collide
   * with the Markdown that message bodies are written in.
   */
  highlight?: readonly [string, string];
}

/** Dependencies of {@linkcode SearchEngine}. */
export interface SearchDeps {
  store: Store;
  config: ResolvedConfig;
  log: Logger;
  /** Injected in tests; the global `fetch` otherwise. */
  fetch?: typeof fetch;
}

interface Candidate {
  message: MessageForResult;
  fts?: FtsHit;
  semantic?: VectorHit;
}

/** A candidate in the results' order, with its fused score (hybrid only). */
interface Ranked {
  candidate: Candidate;
  score?: number;
}

/**
 * The query, trimmed, once the arguments are checked.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a blank or long query, a bad limit or period
 */
function checkedQuery(args: SearchArgs): string {
  const query = args.query.trim();
  if (!query) throw invalidArgument("query must be a non-empty string");
  if (args.query.length > MAX_QUERY_CHARS) {
    throw invalidArgument(`query exceeds max length (${MAX_QUERY_CHARS})`);
  }
  if (args.limit < 1 || args.limit > MAX_SEARCH_LIMIT) {
    throw invalidArgument(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
  }
  if (args.since !== undefined && args.until !== undefined && args.since > args.until) {
    throw invalidArgument("since must not be later than until");
  }
  return query;
}

/**
 * The candidates in the order `mode` gives them: both rankings fused
 * (hybrid), the semantic one, or the full-text one (also when semantic
 * search had nothing to offer).
 */
function ranked(
  mode: SearchArgs["mode"],
  candidates: Map<string, Candidate>,
  ftsHits: FtsHit[],
  semantic: VectorHit[] | undefined,
): Ranked[] {
  if (mode === "hybrid" && semantic) {
    const semanticIds = semantic.map((h) => h.messageId).filter((id) => candidates.has(id));
    return reciprocalRankFusion([ftsHits.map((h) => h.message_id), semanticIds])
      .map(({ id, score }) => ({ candidate: candidates.get(id)!, score }));
  }
  if (mode === "semantic" && semantic) {
    return semantic.filter((h) => candidates.has(h.messageId))
      .map((h) => ({ candidate: candidates.get(h.messageId)! }));
  }
  return ftsHits.map((h) => ({ candidate: candidates.get(h.message_id)! }));
}

/** Search, and the background indexer that keeps semantic search fed. One per process. */
export class SearchEngine {
  readonly embeddings: EmbeddingsClient;
  readonly indexer: Indexer;
  readonly #store: Store;
  readonly #config: ResolvedConfig;
  readonly #indexes = new Map<string, { index: VectorIndex; usedAt: number }>();
  readonly #referenceVectors = new Map<string, Float32Array[]>();
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(deps: SearchDeps) {
    this.#store = deps.store;
    this.#config = deps.config;
    const e = deps.config.embeddings;
    this.embeddings = new EmbeddingsClient({
      url: e.url,
      api: e.api,
      apiKey: e.apiKey,
      timeoutMs: e.timeoutMs,
      retryMs: e.retrySeconds * 1000,
      fetch: deps.fetch,
    });
    this.indexer = new Indexer({
      store: deps.store,
      config: e,
      embeddings: this.embeddings,
      log: deps.log,
    });
  }

  /** Start background indexing. */
  start(): void {
    this.indexer.start();
    this.#sweeper = setInterval(() => {
      const cutoff = performance.now() - INDEX_IDLE_MS;
      for (const [model, entry] of this.#indexes) {
        if (entry.usedAt < cutoff) this.#indexes.delete(model);
      }
    }, 60_000);
    Deno.unrefTimer(this.#sweeper);
  }

  /** Stop indexing and release the lease. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.indexer.stop();
  }

  /** What the semantic index looks like (no database access). */
  status(): IndexStatus {
    return this.indexer.status();
  }

  /**
   * Search message bodies.
   *
   * @throws {BusError} `INVALID_ARGUMENT` for a blank query or a bad limit
   */
  async search(args: SearchArgs, options: SearchOptions = {}): Promise<SearchResult> {
    const query = checkedQuery(args);
    const markers = options.highlight ?? ["«", "»"];
    const warnings: Warning[] = [];
    const pool = args.mode === "fts" ? args.limit : Math.max(args.limit * 2, 40);

    const semantic = args.mode === "fts"
      ? undefined
      : await this.#semantic(query, args, pool, warnings);
    const useFts = args.mode !== "semantic" || semantic === undefined;
    const ftsHits = useFts ? this.#fts(query, args, pool) : [];

    const candidates = this.#candidates(ftsHits, semantic, args);
    const ordered = ranked(args.mode, candidates, ftsHits, semantic);

    const terms = highlightTerms(query);
    const top = args.includeContent
      ? this.#withinBudget(ordered.slice(0, args.limit), warnings)
      : ordered.slice(0, args.limit);
    const results = top.map(({ candidate, score }) =>
      this.#toResult(candidate, { args, terms, markers, score })
    );
    return {
      query: args.query,
      mode: args.mode,
      topic_id: args.topicId ?? null,
      include_content: args.includeContent,
      results,
      count: results.length,
      warnings,
    };
  }

  /** The messages of the hits of either kind, each with its hits. */
  #candidates(
    ftsHits: FtsHit[],
    semantic: VectorHit[] | undefined,
    args: SearchArgs,
  ): Map<string, Candidate> {
    const candidates = new Map<string, Candidate>();
    for (const hit of ftsHits) candidates.set(hit.message_id, { message: hit, fts: hit });
    if (!semantic) return candidates;
    const missing = semantic.filter((h) => !candidates.has(h.messageId)).map((h) => h.messageId);
    const found = new Map(
      this.#store.read(() => messagesForResults(this.#store, missing, args))
        .map((m) => [m.message_id, m]),
    );
    for (const hit of semantic) {
      const existing = candidates.get(hit.messageId);
      if (existing) existing.semantic = hit;
      else if (found.has(hit.messageId)) {
        candidates.set(hit.messageId, { message: found.get(hit.messageId)!, semantic: hit });
      }
    }
    return candidates;
  }

  /** With whole bodies, the first results that fit the size a client passes to its model. */
  #withinBudget(top: Ranked[], warnings: Warning[]): Ranked[] {
    const budget = this.#config.toolResultMaxBytes;
    const fit = countWithinBudget(
      top,
      ({ candidate }) => [candidate.message.topic_name, candidate.message.content_markdown],
      budget,
    );
    if (fit === top.length) return top;
    warnings.push({
      code: "RESULTS_TRUNCATED",
      message: `${counted(top.length - fit, "more result")} left out to keep this result within ` +
        `${budget} bytes; search again with a smaller limit, narrower filters or ` +
        `include_content=false`,
      context: { returned: fit, left_out: top.length - fit },
    });
    return top.slice(0, fit);
  }

  #fts(query: string, args: SearchArgs, limit: number): FtsHit[] {
    const expressions = toFtsExpressions(query);
    if (!expressions) return [];
    const run = (match: string): FtsHit[] =>
      ftsSearch(this.#store, {
        match,
        limit,
        topicId: args.topicId,
        sender: args.sender,
        messageType: args.messageType,
        since: args.since,
        until: args.until,
        // A query of stop words only is ranked among its newest matches (see ftsSearch).
        newest: expressions.broad ? BROAD_QUERY_CANDIDATES : undefined,
      });
    return this.#store.read(() => {
      const every = run(expressions.all);
      if (every.length > 0 || expressions.all === expressions.any) return every;
      return run(expressions.any);
    });
  }

  /** Semantic hits, or undefined (with a warning) when semantic search cannot run. */
  async #semantic(
    query: string,
    args: SearchArgs,
    limit: number,
    warnings: Warning[],
  ): Promise<VectorHit[] | undefined> {
    const model = args.model ?? this.#config.embeddings.model;
    const unavailable = (error: string): undefined => {
      warnings.push({
        code: "semantic_unavailable",
        message: `Semantic search is unavailable (${error}); these are full-text results`,
        context: { url: this.embeddings.url, model },
      });
      return undefined;
    };
    if (!this.embeddings.available()) {
      return unavailable(
        this.embeddings.status().error ?? `${this.embeddings.url} is not answering`,
      );
    }
    let vector: Float32Array;
    try {
      [vector] = await this.embeddings.embed([query], {
        model,
        kind: "query",
        timeoutMs: Math.min(QUERY_EMBED_TIMEOUT_MS, this.#config.embeddings.timeoutMs),
      }) as [Float32Array];
    } catch (error) {
      if (error instanceof EmbeddingsError) return unavailable(error.message);
      throw error;
    }
    let references: Float32Array[];
    try {
      references = await this.#references(model);
    } catch (error) {
      if (error instanceof EmbeddingsError) return unavailable(error.message);
      throw error;
    }
    const index = this.#index(model);
    index.refresh(this.#store);
    const backlog = this.#backlog(model);
    if (backlog > 0) {
      warnings.push({
        code: "semantic_partial",
        message: `The semantic index is still being built: ${counted(backlog, "message")} ${
          backlog === 1 ? "is" : "are"
        } not searchable by meaning yet`,
        context: { model, backlog, indexed_chunks: index.size },
      });
    }
    if (index.size > 0 && vector.length !== index.dims) {
      return unavailable(
        `model "${model}" now returns ${vector.length}-dimensional vectors, ` +
          `the index holds ${index.dims}`,
      );
    }
    return index.search(vector, {
      limit,
      minScore: semanticBar(vector, references, this.#config.embeddings.minScore),
      topicId: args.topicId,
      exact: (ids) => this.#store.read(() => chunkVectors(this.#store, ids)),
    });
  }

  /** Messages without vectors for `model` (0 fast when indexing has caught up). */
  #backlog(model: string): number {
    const { progress, range } = this.#store.read(() => ({
      progress: getProgress(this.#store, model),
      range: messageRowidRange(this.#store),
    }));
    if (range.max === 0) return 0;
    if (progress && progress.highWater >= range.max && progress.lowWater <= range.min) return 0;
    if (model !== this.#config.embeddings.model) return Math.max(1, range.max - range.min + 1);
    this.indexer.refreshCounts();
    return Math.max(1, this.indexer.status().backlog);
  }

  /** Vectors of the reference texts for `model`, embedded once. */
  async #references(model: string): Promise<Float32Array[]> {
    let vectors = this.#referenceVectors.get(model);
    if (!vectors) {
      vectors = await this.embeddings.embed(REFERENCE_TEXTS, { model, kind: "document" });
      this.#referenceVectors.set(model, vectors);
    }
    return vectors;
  }

  #index(model: string): VectorIndex {
    let entry = this.#indexes.get(model);
    if (!entry) {
      entry = { index: new VectorIndex(model), usedAt: 0 };
      this.#indexes.set(model, entry);
    }
    entry.usedAt = performance.now();
    return entry.index;
  }

  #toResult(
    candidate: Candidate,
    context: {
      args: SearchArgs;
      terms: string[];
      markers: readonly [string, string];
      score?: number | undefined;
    },
  ): SearchHit {
    const { message, fts, semantic } = candidate;
    const { args, terms, markers } = context;
    const chunk = semantic
      ? message.content_markdown.slice(semantic.start, semantic.end)
      : undefined;
    const chunkHasTerm = chunk !== undefined &&
      terms.some((t) => chunk.toLowerCase().includes(t));
    let snippet: string;
    if (chunk !== undefined && (chunkHasTerm || !fts)) {
      snippet = markedSnippet(chunk, terms, markers);
    } else {
      snippet = markedSnippet(message.content_markdown, terms, markers);
    }
    const hit: SearchHit = {
      topic_id: message.topic_id,
      topic_name: message.topic_name,
      message_id: message.message_id,
      seq: message.seq,
      sender: message.sender,
      message_type: message.message_type,
      created_at: message.created_at,
      snippet,
    };
    if (args.mode === "fts") {
      hit.rank = fts!.rank;
    } else {
      hit.fts_rank = fts?.rank ?? null;
      hit.semantic_score = semantic ? Math.round(semantic.score * 10000) / 10000 : null;
      if (context.score !== undefined) hit.score = Math.round(context.score * 100000) / 100000;
    }
    if (args.includeContent) hit.content_markdown = message.content_markdown;
    return hit;
  }
}
