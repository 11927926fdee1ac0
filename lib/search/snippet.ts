/**
 * Snippets, built in JavaScript for every hit: full-text hits (FTS5's own
 * `snippet()` is quadratic in the hits of a row), semantic hits (the chunk
 * that matched) and hits found through the code-terms column (`user` inside
 * `getUserName`). Linear in the text for a bounded set of terms.
 *
 * @module
 */

/** Longest snippet, in characters, before the ellipses. */
export const SNIPPET_CHARS = 240;

/**
 * A window of `text` around the first place a term occurs (the start when
 * none does), with every occurrence inside the window marked.
 *
 * @param terms lower-case words to mark, matched case-insensitively, also inside longer words
 */
export function markedSnippet(
  text: string,
  terms: readonly string[],
  markers: readonly [string, string],
): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const pattern = terms.length > 0
    ? new RegExp(terms.map(escapeRegExp).sort((a, b) => b.length - a.length).join("|"), "giu")
    : undefined;
  const first = pattern ? flat.search(pattern) : -1;
  let start = first <= 0 ? 0 : Math.max(0, first - Math.floor(SNIPPET_CHARS / 4));
  if (start > 0) {
    const space = flat.indexOf(" ", start);
    if (space !== -1 && space < first) start = space + 1;
  }
  let end = Math.min(flat.length, start + SNIPPET_CHARS);
  if (end < flat.length) {
    const space = flat.lastIndexOf(" ", end);
    if (space > start + SNIPPET_CHARS / 2) end = space;
  }
  let window = flat.slice(start, end);
  if (pattern) window = window.replace(pattern, (hit) => `${markers[0]}${hit}${markers[1]}`);
  return `${start > 0 ? "…" : ""}${window}${end < flat.length ? "…" : ""}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
