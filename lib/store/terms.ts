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
 * Hazard: this runs over every message body an agent sends (up to 64 KiB of
 * base64, hashes or minified code) and over every query. Regular
 * expressions with nested or adjacent quantifiers backtrack quadratically on
 * a long run of one letter, so everything here is a single forward scan over
 * character classes: linear in the input, whatever the input. A run of
 * letters and digits longer than {@linkcode MAX_IDENTIFIER_CHARS} is a blob,
 * not an identifier, and adds nothing.
 *
 * @module
 */

/** Longest terms string stored per message. */
export const MAX_TERMS_CHARS = 4000;
/** Longest run of letters and digits treated as an identifier (longer runs are blobs). */
export const MAX_IDENTIFIER_CHARS = 128;
/** Longest version string (`1.2.3`) taken from a prefixed version (`v1.2.3`). */
const MAX_VERSION_CHARS = 64;

const SEP = 0;
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const OTHER = 4;

/** The class of the UTF-16 unit at `i`: ASCII lower/upper/digit, another word character, or a separator. */
function kindAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 97 && c <= 122) return LOWER;
  if (c >= 65 && c <= 90) return UPPER;
  if (c >= 48 && c <= 57) return DIGIT;
  if (c < 128) return SEP;
  // Beyond ASCII: Latin-1 punctuation, general and CJK punctuation and spaces separate words;
  // everything else (letters, digits, ideographs, surrogate halves) is part of one.
  if (c < 0xc0 || (c >= 0x2000 && c <= 0x206f) || (c >= 0x3000 && c <= 0x303f)) return SEP;
  return c === 0xd7 || c === 0xf7 || c === 0xfeff ? SEP : OTHER;
}

/**
 * Split a mixed-case identifier into lower-case words: at a lower-case
 * letter or digit followed by a capital (`getUser`), before the last capital
 * of an acronym followed by a lower-case letter (`HTTPServer`), and between
 * a letter and a digit (`Response2`). Anything but a letter or digit
 * separates words. Only the first {@linkcode MAX_IDENTIFIER_CHARS} characters
 * are looked at.
 *
 * @returns the words, or an empty array when the text splits into fewer than two
 * @example splitIdentifier("parseHTTPResponse2") // ["parse", "http", "response", "2"]
 */
export function splitIdentifier(word: string): string[] {
  const text = word.length > MAX_IDENTIFIER_CHARS ? word.slice(0, MAX_IDENTIFIER_CHARS) : word;
  const parts: string[] = [];
  let start = -1;
  let prev = SEP;
  for (let i = 0; i < text.length; i++) {
    const kind = kindAt(text, i);
    if (kind === SEP) {
      if (start !== -1) parts.push(text.slice(start, i).toLowerCase());
      start = -1;
    } else if (start === -1) {
      start = i;
    } else if (
      (kind === UPPER && (prev === LOWER || prev === DIGIT)) ||
      (kind === UPPER && prev === UPPER && i + 1 < text.length && kindAt(text, i + 1) === LOWER) ||
      (kind === DIGIT && (prev === LOWER || prev === UPPER))
    ) {
      parts.push(text.slice(start, i).toLowerCase());
      start = i;
    }
    prev = kind;
  }
  if (start !== -1) parts.push(text.slice(start).toLowerCase());
  return parts.length > 1 ? parts : [];
}

/**
 * The extra terms of a message body: the parts of its mixed-case
 * identifiers and the numbers of its prefixed version strings, each once,
 * at most {@linkcode MAX_TERMS_CHARS} in all. Linear in `text`.
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
  let full = false;
  forEachAsciiRun(text, (start, end) => {
    // An identifier starts with a letter; leading digits are not part of it.
    while (start < end && kindAt(text, start) === DIGIT) start++;
    if (end - start < 2 || end - start > MAX_IDENTIFIER_CHARS || !hasCaseChange(text, start, end)) {
      return true;
    }
    const parts = splitIdentifier(text.slice(start, end));
    full = parts.length > 0 && !add(parts.join(" "));
    return !full;
  });
  if (!full) forEachPrefixedVersion(text, (version) => add(version));
  return out.join("\n");
}

/**
 * Call `visit(start, end)` for each maximal run of ASCII letters and digits,
 * until it returns false.
 */
function forEachAsciiRun(text: string, visit: (start: number, end: number) => boolean): void {
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const kind = i < text.length ? kindAt(text, i) : SEP;
    const ascii = kind === LOWER || kind === UPPER || kind === DIGIT;
    if (ascii && start === -1) start = i;
    if (!ascii && start !== -1) {
      if (!visit(start, i)) return;
      start = -1;
    }
  }
}

/** True when `text[start, end)` has `aB`/`2B` past its first letter, or `ABc` (an acronym before a word). */
function hasCaseChange(text: string, start: number, end: number): boolean {
  for (let i = start + 1; i + 1 < end; i++) {
    const here = kindAt(text, i);
    const next = kindAt(text, i + 1);
    if ((here === LOWER || here === DIGIT) && next === UPPER) return true;
    if (here === UPPER && next === LOWER && kindAt(text, i - 1) === UPPER) return true;
  }
  return false;
}

/**
 * Call `visit` with the number of each letter-prefixed dotted version
 * (`v1.2.3` gives `1.2.3`, `node20.1` gives `20.1`), until it returns false.
 */
function forEachPrefixedVersion(text: string, visit: (version: string) => boolean): void {
  const isLetter = (i: number): boolean => {
    const kind = kindAt(text, i);
    return kind === LOWER || kind === UPPER;
  };
  const isDigit = (i: number): boolean => i < text.length && kindAt(text, i) === DIGIT;
  let i = 1;
  while (i < text.length) {
    if (!isDigit(i) || !isLetter(i - 1)) {
      i++;
      continue;
    }
    const start = i;
    while (isDigit(i)) i++;
    let groups = 0;
    while (text[i] === "." && isDigit(i + 1)) {
      i++;
      while (isDigit(i)) i++;
      groups++;
    }
    if (groups > 0 && i - start <= MAX_VERSION_CHARS && !visit(text.slice(start, i))) return;
  }
}
