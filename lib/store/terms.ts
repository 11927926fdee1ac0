/**
 * Extra index terms that make code findable by its parts.
 *
 * SQLite's unicode61 tokenizer already splits `snake_case`, `kebab-case`,
 * `src/lib/file.ts` and `dotted.names` at their punctuation, but it keeps
 * `getUserName` whole and reads `v1.2.3` as `v1 2 3`. The full-text index
 * therefore has a second column with the parts those two cases hide:
 * `getUserName` adds `get user name`, `HTTPServer` adds `http server`, and
 * `v1.2.3` adds `1.2.3`. Queries are split the same way (`splitIdentifier`),
 * so `userName` also finds `getUserName`.
 *
 * @module
 */

/** Longest terms string stored per message. */
export const MAX_TERMS_CHARS = 4000;

const MIXED_CASE = /[A-Za-z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z][A-Za-z0-9]*/g;
const PREFIXED_VERSION = /[A-Za-z]+(\d+(?:\.\d+)+)/g;

/**
 * Split a mixed-case identifier into lower-case words.
 *
 * @returns the words, or an empty array when the text has no case change
 * @example splitIdentifier("parseHTTPResponse2") // ["parse", "http", "response", "2"]
 */
export function splitIdentifier(word: string): string[] {
  const spaced = word
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])([0-9])/g, "$1 $2");
  const parts = spaced.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return parts.length > 1 ? parts : [];
}

/**
 * The extra terms of a message body: the parts of its mixed-case
 * identifiers and the numbers of its prefixed version strings, each once.
 */
export function codeTerms(text: string): string {
  const seen = new Set<string>();
  const out: string[] = [];
  let length = 0;
  const add = (term: string): boolean => {
    if (seen.has(term)) return true;
    if (length + term.length + 1 > MAX_TERMS_CHARS) return false;
    seen.add(term);
    out.push(term);
    length += term.length + 1;
    return true;
  };
  for (const match of text.matchAll(MIXED_CASE)) {
    const parts = splitIdentifier(match[0]);
    if (parts.length > 0 && !add(parts.join(" "))) break;
  }
  for (const match of text.matchAll(PREFIXED_VERSION)) {
    if (!add(match[1]!)) break;
  }
  return out.join("\n");
}
