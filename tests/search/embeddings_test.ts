/**
 * The embedding client against a real HTTP endpoint in the test: both wire
 * formats, base64 vectors, task prefixes, and an absent endpoint that is
 * probed once per retry window rather than on every call.
 */

import assert from "node:assert/strict";
import { EmbeddingsClient, EmbeddingsError, taskPrefix } from "../../lib/search/embeddings.ts";
import { startFakeEmbedServer } from "../_helpers/embed_server.ts";

function client(
  url: string,
  more: Partial<ConstructorParameters<typeof EmbeddingsClient>[0]> = {},
) {
  return new EmbeddingsClient({ url, api: "auto", timeoutMs: 2000, retryMs: 60_000, ...more });
}

function norm(v: Float32Array): number {
  return Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
}

Deno.test("EmbeddingsClient speaks Ollama and returns unit vectors in order", async () => {
  await using embed = startFakeEmbedServer();
  const c = client(embed.url);
  const texts = Array.from({ length: 70 }, (_, i) => `text number ${i}`);
  const vectors = await c.embed(texts, { model: "m", kind: "document" });
  assert.equal(vectors.length, 70);
  assert.ok(vectors.every((v) => Math.abs(norm(v) - 1) < 1e-5));
  assert.deepEqual(embed.requests.map((r) => r.inputs.length), [32, 32, 6], "batched by 32");
  assert.equal(embed.requests[0]!.route, "ollama");
  assert.equal(c.status().api, "ollama");
  assert.equal(c.status().state, "up");
});

Deno.test("EmbeddingsClient falls back to the OpenAI format and reads base64 vectors", async () => {
  await using embed = startFakeEmbedServer({ api: "openai" });
  const c = client(embed.url);
  const [v] = await c.embed(["hello"], { model: "m", kind: "query" });
  assert.equal(c.status().api, "openai");
  assert.ok(v && Math.abs(norm(v) - 1) < 1e-5);
  const base64Fetch: typeof fetch = () => {
    const floats = new Float32Array([3, 4]);
    const base64 = btoa(String.fromCharCode(...new Uint8Array(floats.buffer)));
    return Promise.resolve(Response.json({ data: [{ index: 0, embedding: base64 }] }));
  };
  const b = client("http://127.0.0.1:1", { api: "openai", fetch: base64Fetch });
  const [decoded] = await b.embed(["x"], { model: "m", kind: "document" });
  assert.deepEqual([...decoded!].map((x) => Math.round(x * 10) / 10), [0.6, 0.8]);
});

Deno.test("EmbeddingsClient sends the model's task prefixes and the API key", async () => {
  const seen: { inputs: string[]; auth: string | null }[] = [];
  const recording: typeof fetch = (_url, init) => {
    const body = JSON.parse(String(init?.body)) as { input: string[] };
    seen.push({ inputs: body.input, auth: new Headers(init?.headers).get("authorization") });
    return Promise.resolve(Response.json({ embeddings: body.input.map(() => [1, 0]) }));
  };
  const c = client("http://127.0.0.1:1", { api: "ollama", apiKey: "sekret", fetch: recording });
  await c.embed(["find x"], { model: "nomic-embed-text", kind: "query" });
  await c.embed(["doc"], { model: "nomic-embed-text:latest", kind: "document" });
  await c.embed(["q"], { model: "intfloat/e5-small-v2", kind: "query" });
  await c.embed(["q"], { model: "all-minilm", kind: "query" });
  assert.deepEqual(seen.map((s) => s.inputs[0]), [
    "search_query: find x",
    "search_document: doc",
    "query: q",
    "q",
  ]);
  assert.equal(seen[0]!.auth, "Bearer sekret");
  assert.match(taskPrefix("BAAI/bge-small-en-v1.5", "query"), /^Represent this sentence/);
  assert.equal(taskPrefix("BAAI/bge-small-en-v1.5", "document"), "");
});

Deno.test("EmbeddingsClient benches an absent endpoint: one failed probe per retry window", async () => {
  let calls = 0;
  const refusing: typeof fetch = () => {
    calls++;
    return Promise.reject(new TypeError("connection refused"));
  };
  const c = client("http://127.0.0.1:9", { fetch: refusing, retryMs: 200 });
  for (let i = 0; i < 5; i++) {
    await assert.rejects(
      c.embed(["x"], { model: "m", kind: "query" }),
      (e: unknown) => e instanceof EmbeddingsError && e.kind === "unavailable",
    );
  }
  assert.equal(calls, 1, "only the first call reached the network");
  assert.equal(c.available(), false);
  assert.equal(c.status().state, "down");
  assert.match(c.status().error ?? "", /connection refused/);
  await new Promise((resolve) => setTimeout(resolve, 250)); // the retry window under test
  assert.equal(c.available(), true);
  await assert.rejects(c.embed(["x"], { model: "m", kind: "query" }));
  assert.equal(calls, 2, "after the window it probes again");
});

Deno.test("EmbeddingsClient treats a missing model as unavailable and bad input as rejected", async () => {
  await using embed = startFakeEmbedServer();
  const missing = client(embed.url, { api: "ollama" });
  await assert.rejects(
    missing.embed(["x"], { model: "missing-model", kind: "query" }),
    (e: unknown) =>
      e instanceof EmbeddingsError && e.kind === "unavailable" && /missing-model/.test(e.message),
  );
  const rejecting: typeof fetch = () =>
    Promise.resolve(new Response("input too long", { status: 400 }));
  const c = client("http://127.0.0.1:1", { api: "ollama", fetch: rejecting });
  await assert.rejects(
    c.embed(["x"], { model: "m", kind: "document" }),
    (e: unknown) => e instanceof EmbeddingsError && e.kind === "rejected",
  );
  assert.equal(c.available(), true, "a refused input does not bench the endpoint");
});
