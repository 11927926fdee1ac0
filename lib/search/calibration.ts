/**
 * How similar is similar enough: a bar for semantic hits that works for
 * any embedding model.
 *
 * Cosine similarities live on different scales per model (unrelated texts
 * score about 0.1 with some models and 0.4 with others), so no fixed number
 * separates a match from noise. Instead, each query is also compared with a
 * few texts that have nothing to do with anything agents discuss: everyday
 * sentences and gibberish. A message must beat the best of those by a
 * margin. A query that means something here clears the bar for the
 * messages that answer it; a query that means nothing here (gibberish, or
 * a question about cake) matches the reference texts as well as anything,
 * and gets nothing back.
 *
 * Measured with Universal Sentence Encoder on the quality benchmark: the
 * bar kept 93 % of the recall@10 that no bar at all gives, and returned
 * nothing for every nonsense query tried.
 *
 * @module
 */

/** Texts unrelated to software work; embedded once per model and process. */
export const REFERENCE_TEXTS: readonly string[] = [
  "The weather was pleasant and sunny all afternoon.",
  "She bought fresh bread and cheese at the market.",
  "The cat slept on the warm windowsill.",
  "They hiked up the mountain trail at dawn.",
  "The orchestra played a symphony by Beethoven.",
  "He painted the fence a bright shade of blue.",
  "Children built a sandcastle on the beach.",
  "The recipe calls for two cups of flour.",
  "A flock of geese flew south for the winter.",
  "The museum opens at nine in the morning.",
  "The football match ended in a draw.",
  "Grandma knitted a red scarf for the holidays.",
  "The train to the coast leaves at noon.",
  "qwxz plmk vvtr ghjy",
  "lorem ipsum dolor sit amet consectetur",
  "zzzz yyyy xxxx wwww",
];

/** How much better than the best reference text a hit must score. */
export const MARGIN = 0.05;

/**
 * The lowest similarity a hit for `query` may have.
 *
 * @param references unit vectors of {@linkcode REFERENCE_TEXTS}, same model
 * @param floor the configured absolute minimum
 */
export function semanticBar(
  query: Float32Array,
  references: readonly Float32Array[],
  floor: number,
): number {
  let best = -1;
  for (const reference of references) {
    if (reference.length !== query.length) continue;
    let dot = 0;
    for (let i = 0; i < query.length; i++) dot += query[i]! * reference[i]!;
    best = Math.max(best, dot);
  }
  return Math.max(floor, best + MARGIN);
}
