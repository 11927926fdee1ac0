/**
 * The size budget of one tool result.
 *
 * A client hands a model the result it gets, and some replace a large one
 * with a file path and a short preview: Claude Code 2.1.197 hands its model
 * the `structuredContent` JSON and replaces it when it reaches 50,000
 * characters (measured with `scripts/measure_clients.ts size`: 49,897
 * characters passed inline, 50,097 did not; characters, not bytes). A result
 * that lists messages is both JSON and text, and a client may show either or
 * both, so each item costs its body twice plus its metadata and a fixed
 * overhead for ids, headers and keys; the default budget of 40,000 keeps the
 * JSON near 20,000 characters, below that limit even if escaping doubles it.
 * A call that would return more stops adding items at the budget and says
 * `has_more` (a `sync` then advances the cursor only over what it returned);
 * the first item is always returned whole, so a lone large message is still
 * delivered.
 *
 * Costs are computed from string lengths (constant time per item), so the
 * fitting can run inside a write transaction without scanning bodies.
 *
 * @module
 */

/** Characters one listed item costs besides its text (ids, names, header line, JSON keys). */
export const ITEM_OVERHEAD_CHARS = 400;

/** The cost of an item whose text fields have these lengths: twice the text, plus the overhead. */
export function itemCost(...lengths: number[]): number {
  let total = ITEM_OVERHEAD_CHARS;
  for (const length of lengths) total += 2 * length;
  return total;
}

/**
 * How many of `items` (in order) fit in `budget`: at least one when there
 * is one, then as many as stay within it.
 */
export function countWithinBudget<T>(
  items: readonly T[],
  cost: (item: T) => number,
  budget: number,
): number {
  let used = 0;
  let count = 0;
  for (const item of items) {
    used += cost(item);
    if (count > 0 && used > budget) break;
    count++;
  }
  return count;
}
