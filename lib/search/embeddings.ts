/**
 * The client of an optional local embedding endpoint.
 *
 * Speaks Ollama (`POST /api/embed`) and the OpenAI-compatible
 * `POST /v1/embeddings` (llama.cpp server, LM Studio, vLLM,
 * text-embeddings-inference, LocalAI); with `api: "auto"` it tries Ollama's
 * route and remembers which one answered. Vectors come back normalized to
 * unit length, so a dot product is a cosine similarity.
 *
 * An endpoint that cannot be reached is left alone for `retryMs` after the
 * failure: every call in that time fails at once without touching the
 * network, so an absent Ollama costs one failed probe per minute, not one
 * per query. The first call after that probes again, so semantic search
 * comes back by itself when the endpoint does.
 *
 * Models trained with task prefixes get them: nomic-embed-text
 * (`search_query: ` / `search_document: `), e5 (`query: ` / `passage: `),
 * bge, mxbai and arctic (an instruction before queries).
 *
 * @module
 */

import type { EmbeddingsApi } from "../config.ts";

/** Why an embedding request failed. */
export class EmbeddingsError extends Error {
  /** `unavailable`: could not reach or use the endpoint; `rejected`: it refused these inputs. */
  readonly kind: "unavailable" | "rejected";

  constructor(kind: "unavailable" | "rejected", message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
    this.kind = kind;
  }
}

/** Options of {@linkcode EmbeddingsClient}. */
export interface EmbeddingsClientOptions {
  url: string;
  api: EmbeddingsApi;
  apiKey?: string | undefined;
  timeoutMs: number;
  retryMs: number;
  /** Injected in tests; the global `fetch` otherwise. */
  fetch?: typeof fetch;
}

/** What the client knows about its endpoint. */
export interface EndpointStatus {
  url: string;
  state: "unknown" | "up" | "down";
  api?: "ollama" | "openai";
  error?: string;
  /** Milliseconds until the next attempt, while down. */
  retryInMs?: number;
}

/** Texts per request. */
const BATCH = 32;

const PREFIXES: [RegExp, string, string][] = [
  [/nomic-embed/i, "search_query: ", "search_document: "],
  [/(^|[/:-])(multilingual-)?e5([-:]|$)/i, "query: ", "passage: "],
  [
    /bge-.*en|bge-(small|base|large)|mxbai-embed|snowflake-arctic-embed/i,
    "Represent this sentence for searching relevant passages: ",
    "",
  ],
];

/** The prefix a model expects before a query or a document. */
export function taskPrefix(model: string, kind: "query" | "document"): string {
  for (const [pattern, query, document] of PREFIXES) {
    if (pattern.test(model)) return kind === "query" ? query : document;
  }
  return "";
}

/** Embeds texts with one endpoint; one instance per process. */
export class EmbeddingsClient {
  readonly url: string;
  readonly #options: EmbeddingsClientOptions;
  readonly #fetch: typeof fetch;
  #api: "ollama" | "openai" | undefined;
  #state: "unknown" | "up" | "down" = "unknown";
  #error: string | undefined;
  #retryAt = 0;

  constructor(options: EmbeddingsClientOptions) {
    this.url = options.url;
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#api = options.api === "auto" ? undefined : options.api;
  }

  /** False while a recent failure keeps the endpoint benched. */
  available(): boolean {
    return this.#state !== "down" || performance.now() >= this.#retryAt;
  }

  /** A snapshot for status output. */
  status(): EndpointStatus {
    const status: EndpointStatus = { url: this.url, state: this.#state };
    if (this.#api) status.api = this.#api;
    if (this.#error) status.error = this.#error;
    if (this.#state === "down") {
      status.retryInMs = Math.max(0, Math.round(this.#retryAt - performance.now()));
    }
    return status;
  }

  /**
   * Embed `texts` with `model`, in batches.
   *
   * @returns one unit vector per text, in order
   * @throws {EmbeddingsError} `unavailable` (nothing answered, or the model is unusable) or
   *   `rejected` (the endpoint refused these inputs)
   */
  async embed(
    texts: readonly string[],
    options: { model: string; kind: "query" | "document"; timeoutMs?: number },
  ): Promise<Float32Array[]> {
    if (!this.available()) {
      throw new EmbeddingsError("unavailable", this.#error ?? `${this.url} is not answering`);
    }
    const prefix = taskPrefix(options.model, options.kind);
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = texts.slice(i, i + BATCH).map((t) => prefix + t);
      out.push(...await this.#request(batch, options.model, options.timeoutMs));
    }
    return out;
  }

  async #request(inputs: string[], model: string, timeoutMs?: number): Promise<Float32Array[]> {
    const api = this.#api ?? "ollama";
    let response: Response;
    try {
      response = await this.#post(api, { model, input: inputs }, timeoutMs);
    } catch (error) {
      throw this.#down(`Cannot reach ${this.url}: ${messageOf(error)}`, error);
    }
    const body = await response.text().catch(() => "");
    const notThisRoute = (response.status === 404 || response.status === 405) &&
      !/model/i.test(body);
    if (this.#api === undefined && api === "ollama" && notThisRoute) {
      // Not Ollama: try the OpenAI-compatible route once and remember the answer.
      this.#api = "openai";
      return this.#request(inputs, model, timeoutMs);
    }
    if (!response.ok) {
      const detail = `${response.status} ${body.slice(0, 200)}`.trim();
      if (
        response.status >= 500 || response.status === 401 || response.status === 403 ||
        /model/i.test(body)
      ) {
        throw this.#down(`${this.url} refused model "${model}": ${detail}`);
      }
      throw new EmbeddingsError("rejected", `${this.url} rejected the input: ${detail}`);
    }
    let vectors: Float32Array[];
    try {
      vectors = parseVectors(api, JSON.parse(body)).map(toUnitVector);
    } catch (error) {
      throw this.#down(
        `${this.url} sent an answer that is not embeddings: ${messageOf(error)}`,
        error,
      );
    }
    if (vectors.length !== inputs.length) {
      throw this.#down(`${this.url} returned ${vectors.length} vectors for ${inputs.length} texts`);
    }
    this.#api = api;
    this.#state = "up";
    this.#error = undefined;
    return vectors;
  }

  #post(api: "ollama" | "openai", payload: { model: string; input: string[] }, timeoutMs?: number) {
    const url = api === "ollama"
      ? `${this.url}/api/embed`
      : `${this.url}${this.url.endsWith("/v1") ? "" : "/v1"}/embeddings`;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    const body = api === "ollama" ? payload : { ...payload, encoding_format: "float" };
    return this.#fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs ?? this.#options.timeoutMs),
    });
  }

  #down(message: string, cause?: unknown): EmbeddingsError {
    this.#state = "down";
    this.#error = message;
    this.#retryAt = performance.now() + this.#options.retryMs;
    return new EmbeddingsError("unavailable", message, { cause });
  }
}

function parseVectors(api: "ollama" | "openai", json: unknown): number[][] | string[] {
  if (api === "ollama") {
    const embeddings = (json as { embeddings?: unknown }).embeddings;
    if (!Array.isArray(embeddings)) throw new Error("no embeddings array");
    return embeddings as number[][];
  }
  const data = (json as { data?: unknown }).data;
  if (!Array.isArray(data)) throw new Error("no data array");
  return (data as { index?: number; embedding: number[] | string }[])
    .slice()
    .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
    .map((item) => item.embedding) as number[][] | string[];
}

/** A float or base64 vector as a unit-length Float32Array. */
function toUnitVector(raw: number[] | string): Float32Array {
  let vector: Float32Array;
  if (typeof raw === "string") {
    const bytes = Uint8Array.from(atob(raw), (c) => c.charCodeAt(0));
    vector = new Float32Array(bytes.buffer, 0, Math.floor(bytes.length / 4)).slice();
  } else if (Array.isArray(raw) && raw.every((x) => typeof x === "number")) {
    vector = Float32Array.from(raw);
  } else {
    throw new Error("a vector is neither numbers nor base64");
  }
  if (vector.length === 0) throw new Error("an empty vector");
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm;
  return vector;
}

function messageOf(error: unknown): string {
  if (error instanceof DOMException && error.name === "TimeoutError") return "timed out";
  return error instanceof Error ? error.message : String(error);
}
