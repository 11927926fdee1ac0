/**
 * Search quality: recall@10 and nDCG@10 of each search mode on a labelled
 * set (bench/_quality_data.ts) mixed into ordinary chatter, through a real
 * server process. Semantic and hybrid run only when an embedding endpoint
 * is given in AGENT_BUS_EMBEDDINGS_URL.
 *
 * @module
 */

import { startPeer, until } from "../tests/_helpers/peer.ts";
import { prng } from "../tests/stress/_size.ts";
import { corpus } from "./_corpus.ts";
import { QUALITY_CASES } from "./_quality_data.ts";

/** Scores of one mode. */
export interface ModeQuality {
  mode: "fts" | "semantic" | "hybrid";
  recallAt10: number;
  ndcgAt10: number;
}

/** The quality run. */
export interface QualityResult {
  messages: number;
  queries: number;
  model: string | undefined;
  indexSeconds: number | undefined;
  modes: ModeQuality[];
}

/** Run the quality benchmark with `filler` chatter messages around the labelled ones. */
export async function benchQuality(
  dir: string,
  options: { filler: number; semantic: boolean },
): Promise<QualityResult> {
  const url = Deno.env.get("AGENT_BUS_EMBEDDINGS_URL");
  const semantic = options.semantic && url !== undefined;
  const env: Record<string, string> = semantic
    ? { AGENT_BUS_EMBEDDINGS_URL: url!, AGENT_BUS_EMBEDDINGS_TIMEOUT_MS: "120000" }
    : { AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9", AGENT_BUS_EMBEDDINGS_AUTOINDEX: "0" };
  const model = Deno.env.get("AGENT_BUS_EMBEDDING_MODEL");
  if (semantic && model) env.AGENT_BUS_EMBEDDING_MODEL = model;
  await using peer = await startPeer({ dbPath: `${dir}/quality.sqlite`, env });
  const topic = await peer.ok("topic_create", { name: "quality" });
  await peer.ok("topic_join", { agent_name: "writer", topic_id: topic.topic_id });

  // Labelled messages placed at random among the chatter.
  const random = prng(7);
  const next = corpus(99);
  const labelled = QUALITY_CASES.flatMap((c, caseIndex) =>
    c.messages.map((text, position) => ({ text, caseIndex, grade: position === 0 ? 2 : 1 }))
  );
  const stream: ({ text: string; caseIndex: number; grade: number } | string)[] = [
    ...labelled,
    ...Array.from({ length: options.filler }, () => next()),
  ];
  for (let i = stream.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [stream[i], stream[j]] = [stream[j]!, stream[i]!];
  }
  const grades = QUALITY_CASES.map(() => new Map<string, number>());
  for (let i = 0; i < stream.length; i += 50) {
    const batch = stream.slice(i, i + 50);
    const result = await peer.ok("sync", {
      topic_id: topic.topic_id,
      outbox: batch.map((item) => ({
        content_markdown: typeof item === "string" ? item : item.text,
      })),
      max_items: 1,
      wait_seconds: 0,
    });
    (result.sent as { message: { message_id: string } }[]).forEach((sent, k) => {
      const item = batch[k]!;
      if (typeof item !== "string") {
        grades[item.caseIndex]!.set(sent.message.message_id, item.grade);
      }
    });
  }

  let indexSeconds: number | undefined;
  if (semantic) {
    const started = performance.now();
    // A semantic search warns while any message lacks vectors (it counts them in the database).
    await until(async () => {
      const probe = await peer.ok("messages_search", {
        query: "status",
        mode: "semantic",
        limit: 1,
      });
      return !probe.warnings;
    }, { timeoutMs: 20 * 60_000, everyMs: 1000, what: "the semantic index to be built" });
    indexSeconds = (performance.now() - started) / 1000;
  }

  const modes: ModeQuality[] = [];
  for (const mode of semantic ? ["fts", "semantic", "hybrid"] as const : ["fts"] as const) {
    let recall = 0;
    let ndcg = 0;
    for (const [i, c] of QUALITY_CASES.entries()) {
      const found = await peer.ok("messages_search", { query: c.query, mode, limit: 10 });
      const ids = (found.results as { message_id: string }[]).map((r) => r.message_id);
      const relevant = grades[i]!;
      recall += ids.filter((id) => relevant.has(id)).length / relevant.size;
      ndcg += ndcgAt10(ids.map((id) => relevant.get(id) ?? 0), [...relevant.values()]);
    }
    modes.push({
      mode,
      recallAt10: recall / QUALITY_CASES.length,
      ndcgAt10: ndcg / QUALITY_CASES.length,
    });
  }
  return {
    messages: stream.length,
    queries: QUALITY_CASES.length,
    model: semantic ? (model ?? "nomic-embed-text") : undefined,
    indexSeconds,
    modes,
  };
}

/** nDCG@10 of a ranking, given the grades it returned and all grades there are. */
export function ndcgAt10(returned: number[], all: number[]): number {
  const dcg = (grades: number[]) =>
    grades.slice(0, 10).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg([...all].sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(returned) / ideal;
}
