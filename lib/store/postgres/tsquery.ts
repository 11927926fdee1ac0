/**
 * Our safe FTS5 expressions (see `lib/search/fts_query.ts`) as PostgreSQL
 * `tsquery` text, so both engines search with the same query handling.
 *
 * The expressions are ours, not the user's: quoted phrases joined by `AND`
 * and `OR`, grouped by parentheses. Each phrase becomes its words, each
 * quoted as a lexeme and joined by `<->` (followed by), for `to_tsquery`
 * to stem and drop stop words as the index did. Nothing of the user's text
 * can become an operator: only letters and digits survive inside quotes.
 *
 * Input bounds: one forward scan of an expression that `fts_query.ts`
 * already bounded (32 words of 128 characters).
 *
 * @module
 */

/** The `tsquery` text for an FTS5 expression built by `toFtsExpressions`. */
export function ftsToTsquery(expression: string): string {
  let out = "";
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i]!;
    if (c === '"') {
      let phrase = "";
      for (i++; i < expression.length; i++) {
        if (expression[i] === '"') {
          if (expression[i + 1] !== '"') break;
          i++;
        }
        phrase += expression[i];
      }
      const words = phrase.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
      out += words.length === 0 ? "''" : `(${words.map((w) => `'${w}'`).join(" <-> ")})`;
    } else if (c === "(" || c === ")") {
      out += c;
    } else if (expression.startsWith("AND", i)) {
      out += " & ";
      i += 2;
    } else if (expression.startsWith("OR", i)) {
      out += " | ";
      i += 2;
    }
  }
  return out;
}
