/**
 * The size budget of one tool result.
 *
 * Clients hand a model the result they get, and cut or replace a large one.
 * Measured with real clients (`scripts/measure_clients.ts`): Codex 0.169.0
 * passes the `structuredContent` JSON and cuts any tool output past about
 * 12,000 bytes out of its middle (3,000 "tokens" of 4 bytes; 11,500 ASCII
 * characters passed whole, 4,000 three-byte ones did not); Claude Code
 * 2.1.197 passes the same JSON and swaps it for a file path from 50,000
 * characters on. A result cut in the middle loses messages whose cursor has
 * already moved, so a result that lists messages stops adding items at the
 * budget and says `has_more` instead; the first item is always returned
 * whole, so a lone large message is still delivered (to the extent the
 * client lets it through).
 *
 * An item's cost is the UTF-8 size of its text fields as JSON string
 * contents (escapes counted), plus a fixed overhead for ids, names and keys:
 * what it adds to the JSON, and about what it adds to the text. Counting
 * stops once the budget is passed, so fitting scans at most about a budget's
 * worth of characters and can run inside a write transaction.
 *
 * @module
 */

/** Bytes one listed item adds besides its text fields (ids, names, numbers, keys). */
export const ITEM_OVERHEAD_BYTES = 300;

/**
 * UTF-8 bytes of `text` as the contents of a JSON string (quotes, backslashes
 * and control characters escaped), or any number above `cap` once it is
 * clear the total passes it.
 */
export function jsonBytes(text: string, cap: number): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= cap; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) bytes += c === 0x0a || c === 0x09 || c === 0x0d ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) bytes += 2;
    else if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else bytes += 3; // a surrogate pair counts 3 + 3, above its 4: a little margin
  }
  return bytes;
}

/**
 * How many of `items` (in order) fit in `budget` bytes: at least one when
 * there is one, then as many as stay within it. `texts` gives an item's
 * text fields.
 */
export function countWithinBudget<T>(
  items: readonly T[],
  texts: (item: T) => readonly (string | null | undefined)[],
  budget: number,
): number {
  let used = 0;
  let count = 0;
  for (const item of items) {
    used += ITEM_OVERHEAD_BYTES;
    for (const text of texts(item)) {
      if (text) used += jsonBytes(text, budget - used);
    }
    if (count > 0 && used > budget) break;
    count++;
    if (used > budget) break;
  }
  return count;
}

/**
 * The leading `items` whose JSON fits in `budget` bytes together (at least
 * one when there is one, as {@linkcode countWithinBudget}), and whether
 * some were left out. For lists whose items are whole objects (agents,
 * templates, edits); each item is serialised once, linear in its size.
 */
export function fitJson<T>(items: readonly T[], budget: number): { items: T[]; cut: boolean } {
  let used = 0;
  let count = 0;
  for (const item of items) {
    used += jsonBytes(JSON.stringify(item), budget - used + 1) + 1;
    if (count > 0 && used > budget) break;
    count++;
    if (used > budget) break;
  }
  return { items: items.slice(0, count), cut: count < items.length };
}

/** The warning a list cut to the result budget carries: how many were left out, and what to do. */
export function truncatedWarning(
  leftOut: number,
  budget: number,
  hint: string,
): { code: "RESULTS_TRUNCATED"; message: string; context: Record<string, unknown> } {
  return {
    code: "RESULTS_TRUNCATED",
    message: `${leftOut} more item(s) left out to keep this result within ${budget} bytes ` +
      `(AGENT_BUS_TOOL_RESULT_MAX_BYTES); ${hint}`,
    context: { left_out: leftOut },
  };
}
