/**
 * User text to a safe FTS5 `MATCH` expression.
 *
 * Raw text must never reach `MATCH`: FTS5 syntax (`"`, `(`, `-`, `NOT`,
 * `NEAR`, `col:`) would either error or change the meaning of the query.
 * Every whitespace-separated word becomes a quoted phrase (quotes inside
 * doubled), so `foo-bar` searches the phrase "foo bar", `NOT` searches the
 * word "not", and a lone `"` or `(` is dropped. Words without a letter or a
 * digit cannot match anything and are dropped too. A mixed-case word may
 * also match as its parts (`userName` finds `getUserName`, whose parts the
 * index holds), and common English words are left out of the "every word"
 * expression, so a question finds the messages that answer it.
 *
 * Input bounds: a query is split once (linear); at most
 * {@linkcode MAX_QUERY_TERMS} words of at most {@linkcode MAX_TERM_CHARS}
 * characters are looked at further.
 *
 * @module
 */

import { splitIdentifier } from "../store/terms.ts";

/** Most words of a query that are searched; the rest are ignored. */
export const MAX_QUERY_TERMS = 32;
/** Longest single word kept (longer ones are cut). */
export const MAX_TERM_CHARS = 128;

const STOP_WORDS = new Set(
  ("a an and are as at be but by can could did do does for from had has have how i if in into is " +
    "it its me my of on or our please should so than that the their them then there these they this " +
    "to was we were what when where which who why will with would you your").split(" "),
);

/** Two expressions over the same words: every (meaningful) word, and any word. */
export interface FtsExpressions {
  all: string;
  any: string;
  /** The words searched, as typed. */
  terms: string[];
  /** Only stop words: it matches nearly every message, so ranking every match says little. */
  broad: boolean;
}

/**
 * Build the `MATCH` expressions for `text`.
 *
 * @returns undefined when no searchable word is left
 */
export function toFtsExpressions(text: string): FtsExpressions | undefined {
  const terms: string[] = [];
  // Control characters (a NUL ends an FTS5 string early) separate words like spaces.
  for (const word of text.split(/[\s\p{Cc}]+/u)) {
    if (!/[\p{L}\p{N}]/u.test(word)) continue;
    terms.push(word.slice(0, MAX_TERM_CHARS));
    if (terms.length === MAX_QUERY_TERMS) break;
  }
  if (terms.length === 0) return undefined;
  const clauses = terms.map(clause);
  const meaningful = terms.map((term, i) => isStopWord(term) ? undefined : clauses[i]!)
    .filter((c): c is string => c !== undefined);
  return {
    all: (meaningful.length > 0 ? meaningful : clauses).join(" AND "),
    any: clauses.join(" OR "),
    terms,
    broad: meaningful.length === 0,
  };
}

/**
 * The words of a query worth marking in a snippet (lower case, no stop
 * words): at most {@linkcode MAX_QUERY_TERMS} words of at most
 * {@linkcode MAX_TERM_CHARS} characters each, so the snippet's pattern stays
 * small whatever the query.
 */
export function highlightTerms(text: string): string[] {
  const words = new Set<string>();
  let taken = 0;
  for (const raw of text.split(/[^\p{L}\p{N}_]+/u)) {
    if (raw.length < 2 || isStopWord(raw)) continue;
    const word = raw.slice(0, MAX_TERM_CHARS);
    const lower = word.toLowerCase();
    words.add(lower);
    // The index stems words (porter): mark "migration" for "migrations" too.
    const stem = lower.length >= 5 ? lower.replace(/(?:ing|ed|es|s)$/, "") : lower;
    if (stem.length >= 3) words.add(stem);
    for (const part of splitIdentifier(word)) if (part.length > 1) words.add(part);
    if (++taken === MAX_QUERY_TERMS) break;
  }
  return [...words];
}

function clause(term: string): string {
  const phrase = quote(term);
  const parts = splitIdentifier(term.replace(/[^\p{L}\p{N}]+/gu, ""));
  return parts.length > 1 ? `(${phrase} OR ${quote(parts.join(" "))})` : phrase;
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

function isStopWord(term: string): boolean {
  return STOP_WORDS.has(term.toLowerCase().replace(/[^\p{L}]+/gu, ""));
}
