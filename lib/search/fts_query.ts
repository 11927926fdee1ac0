/**
 * User text to a safe FTS5 `MATCH` expression.
 *
 * Raw text must never reach `MATCH`: FTS5 syntax (`"`, `(`, `-`, `NOT`,
 * `NEAR`, `col:`) would either error or change the meaning of the query.
 * Every whitespace-separated word becomes a quoted phrase (quotes inside
 * doubled), so `foo-bar` searches the phrase "foo bar", `NOT` searches the
 * word "not", and a lone `"` or `(` is dropped. Words without a letter or a
 * digit cannot match anything and are dropped too.
 *
 * @module
 */

/** Most words of a query that are searched; the rest are ignored. */
export const MAX_QUERY_TERMS = 32;
/** Longest single word kept (longer ones are cut). */
export const MAX_TERM_CHARS = 128;

/** Two expressions over the same words: every word, and any word. */
export interface FtsExpressions {
  all: string;
  any: string;
  terms: string[];
}

/**
 * Build the `MATCH` expressions for `text`.
 *
 * @returns undefined when no searchable word is left
 */
export function toFtsExpressions(text: string): FtsExpressions | undefined {
  const terms: string[] = [];
  for (const word of text.split(/\s+/)) {
    if (!/[\p{L}\p{N}]/u.test(word)) continue;
    terms.push(word.slice(0, MAX_TERM_CHARS));
    if (terms.length === MAX_QUERY_TERMS) break;
  }
  if (terms.length === 0) return undefined;
  const phrases = terms.map((term) => `"${term.replaceAll('"', '""')}"`);
  return { all: phrases.join(" AND "), any: phrases.join(" OR "), terms };
}
