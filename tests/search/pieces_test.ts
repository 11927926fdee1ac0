/**
 * The small parts of search: chunking, rank fusion, code terms, and the
 * WebAssembly kernel that the vector index scans with.
 */

import assert from "node:assert/strict";
import { MARGIN, semanticBar } from "../../lib/search/calibration.ts";
import { chunkText } from "../../lib/search/chunk.ts";
import { reciprocalRankFusion } from "../../lib/search/fusion.ts";
import { markedSnippet } from "../../lib/search/snippet.ts";
import { highlightTerms, MAX_QUERY_TERMS } from "../../lib/search/fts_query.ts";
import { codeTerms, splitIdentifier } from "../../lib/store/terms.ts";

Deno.test("chunkText keeps short texts whole and cuts long ones at paragraphs with overlap", () => {
  assert.deepEqual(chunkText("  short  ", { size: 100, overlap: 20 }), [{
    start: 0,
    end: 9,
    text: "short",
  }]);
  const paragraphs = Array.from({ length: 6 }, (_, i) => `Paragraph ${i}. ` + "word ".repeat(40))
    .join("\n\n");
  const chunks = chunkText(paragraphs, { size: 500, overlap: 100 });
  assert.ok(chunks.length >= 3);
  for (const [i, chunk] of chunks.entries()) {
    assert.ok(chunk.end - chunk.start <= 500);
    assert.equal(chunk.text, paragraphs.slice(chunk.start, chunk.end).trim());
    if (i > 0) assert.ok(chunk.start < chunks[i - 1]!.end, "chunks overlap");
    if (chunk.end < paragraphs.length) {
      assert.match(paragraphs.slice(chunk.end - 2, chunk.end), /\n\n$/);
    }
  }
  assert.equal(chunks.at(-1)!.end, paragraphs.length, "the whole text is covered");
  assert.equal(chunkText("x".repeat(100_000), { size: 1000, overlap: 100 }).length, 64, "bounded");
  assert.deepEqual(chunkText("   \n\n  ", { size: 100, overlap: 10 }), []);
});

Deno.test("reciprocalRankFusion rewards agreement and keeps single-list items", () => {
  const fused = reciprocalRankFusion([["a", "b", "c"], ["c", "d"]]);
  assert.equal(fused[0]!.id, "c", "found by both lists");
  assert.deepEqual(fused.map((f) => f.id).sort(), ["a", "b", "c", "d"]);
  assert.ok(fused.find((f) => f.id === "a")!.score > fused.find((f) => f.id === "d")!.score);
});

Deno.test("splitIdentifier and codeTerms find the parts of code", () => {
  assert.deepEqual(splitIdentifier("parseHTTPResponse2"), ["parse", "http", "response", "2"]);
  assert.deepEqual(splitIdentifier("plain"), []);
  const terms = codeTerms(
    "Call getUserName() then getUserName again, upgrade to v1.2.3 and node20.1",
  );
  assert.deepEqual(terms.split("\n"), ["get user name", "1.2.3", "20.1"]);
  assert.ok(codeTerms("aB ".repeat(5000)).length <= 4000);
});

Deno.test("markedSnippet centres on the first hit and marks every hit", () => {
  const text = "intro ".repeat(100) + "the Database is slow; database again " +
    "outro ".repeat(100);
  const snippet = markedSnippet(text, ["database"], ["[", "]"]);
  assert.match(snippet, /^…/);
  assert.match(snippet, /\[Database\] is slow; \[database\] again/);
  assert.ok(snippet.length < 260);
  assert.equal(markedSnippet("no hits here", ["zzz"], ["[", "]"]), "no hits here");
});

Deno.test("semanticBar puts the bar just above the best reference text, never below the floor", () => {
  const q = Float32Array.from([1, 0]);
  const refs = [Float32Array.from([0.6, 0.8]), Float32Array.from([0, 1])];
  assert.ok(Math.abs(semanticBar(q, refs, 0.1) - (0.6 + MARGIN)) < 1e-6);
  assert.equal(semanticBar(q, [Float32Array.from([0, 1])], 0.3), 0.3);
  assert.equal(
    semanticBar(q, [Float32Array.from([1, 0, 0])], 0.2),
    0.2,
    "other dimensions are ignored",
  );
});

Deno.test("code terms and query terms stay linear on pathological text", () => {
  // The backtracking regexes these replace took 10-16 s on the first input.
  const inputs = [
    "X".repeat(65_536),
    "aB".repeat(32_768),
    "AB".repeat(32_767) + "c",
    "v1.".repeat(21_845),
    "a".repeat(65_535) + "1",
  ];
  for (const text of inputs) {
    const started = performance.now();
    codeTerms(text);
    splitIdentifier(text);
    const words = highlightTerms(text.slice(0, 16_384));
    assert.ok(words.length <= 2 * MAX_QUERY_TERMS + 2);
    const ms = performance.now() - started;
    assert.ok(ms < 1_000, `${text.slice(0, 8)}… took ${ms.toFixed(0)} ms`);
  }
  assert.ok(highlightTerms("ab ".repeat(5_000)).length <= 2 * MAX_QUERY_TERMS);
});
