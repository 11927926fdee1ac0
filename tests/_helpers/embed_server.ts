/**
 * A real HTTP embedding endpoint inside the test process, speaking both
 * wire formats (Ollama `POST /api/embed`, OpenAI `POST /v1/embeddings`).
 *
 * Its vectors are deterministic: hashed character trigrams of each word,
 * so texts that share words or word pieces are close, plus a small table of
 * "concepts" (car = automobile = vehicle, ...) that stands in for meaning,
 * so a text can be close to another it shares no word with. It records
 * every request, can refuse connections (`stop()`/`start()` on the same
 * port), and can mimic a server that is not Ollama (`api: "openai"`).
 *
 * @module
 */

/** Dimensions of the fake vectors. */
export const FAKE_DIMS = 1024;

const CONCEPTS: string[][] = [
  ["car", "cars", "automobile", "automobiles", "vehicle", "vehicles", "sedan"],
  ["crash", "crashes", "crashed", "panic", "panics", "segfault", "segmentation"],
  ["database", "databases", "sqlite", "postgres", "db"],
  ["slow", "sluggish", "latency", "laggy", "lag"],
  ["money", "payment", "payments", "invoice", "billing", "paid"],
];

/** One request as the server saw it. */
export interface EmbedRequest {
  route: "ollama" | "openai";
  model: string;
  inputs: string[];
}

/** A running fake endpoint. */
export interface FakeEmbedServer extends AsyncDisposable {
  url: string;
  requests: EmbedRequest[];
  /** Most requests that were in flight at once. */
  maxConcurrent: number;
  stop(): Promise<void>;
  start(): void;
}

/** Start a fake endpoint on a free loopback port. */
export function startFakeEmbedServer(
  options: { api?: "both" | "openai"; delayMs?: number } = {},
): FakeEmbedServer {
  const requests: EmbedRequest[] = [];
  let inFlight = 0;
  let port = 0;
  let server: Deno.HttpServer | undefined;
  const self: FakeEmbedServer = {
    url: "",
    requests,
    maxConcurrent: 0,
    stop: async () => {
      await server?.shutdown();
      server = undefined;
    },
    start: () => {
      server = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (req) => {
        const url = new URL(req.url);
        const route = url.pathname === "/api/embed" && options.api !== "openai"
          ? "ollama"
          : url.pathname === "/v1/embeddings"
          ? "openai"
          : undefined;
        if (req.method !== "POST" || !route) return new Response("not found", { status: 404 });
        const body = await req.json() as { model: string; input: string | string[] };
        const inputs = typeof body.input === "string" ? [body.input] : body.input;
        requests.push({ route, model: body.model, inputs });
        inFlight++;
        self.maxConcurrent = Math.max(self.maxConcurrent, inFlight);
        try {
          if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
          if (body.model === "missing-model") {
            return Response.json({ error: `model "${body.model}" not found` }, { status: 404 });
          }
          const vectors = inputs.map(fakeVector);
          return route === "ollama"
            ? Response.json({ model: body.model, embeddings: vectors })
            : Response.json({
              object: "list",
              data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
            });
        } finally {
          inFlight--;
        }
      });
      port = (server.addr as Deno.NetAddr).port;
      self.url = `http://127.0.0.1:${port}`;
    },
    [Symbol.asyncDispose]: () => self.stop(),
  };
  self.start();
  return self;
}

/** The fake vector of a text (not normalized: the client normalizes). */
export function fakeVector(text: string): number[] {
  const vector = new Array<number>(FAKE_DIMS).fill(0);
  const words = text.toLowerCase().replace(/^(search_query|search_document|query|passage): /, "")
    .split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  for (const word of words) {
    const concept = CONCEPTS.findIndex((group) => group.includes(word));
    if (concept !== -1) {
      for (let k = 0; k < 6; k++) vector[hash(`concept${concept}:${k}`) % FAKE_DIMS]! += 3;
      continue;
    }
    const padded = `^${word}$`;
    for (let i = 0; i + 3 <= padded.length; i++) {
      vector[hash(padded.slice(i, i + 3)) % FAKE_DIMS]! += 1;
    }
  }
  if (words.length === 0) vector[0] = 1;
  return vector;
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}
