/**
 * Inputs that make careless text handling slow: long runs of one
 * character, alternating case, many separators, near-matches of code
 * terms, and multi-byte text, each at the largest size a message may have.
 * Shared by the stress test (every call returns promptly) and the bench
 * (how slow the slowest one is).
 *
 * @module
 */

/** The contract's longest message body. */
export const MAX_BODY = 65_536;

function fill(unit: string, length = MAX_BODY): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/** A pseudo-random base64 blob (deterministic, no crypto needed). */
function base64Blob(length: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  let state = 12345;
  let out = "";
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[state % 64];
  }
  return out;
}

/** Named pathological texts, each at most {@linkcode MAX_BODY} characters. */
export const PATHOLOGICAL_TEXTS: readonly { name: string; text: string }[] = [
  { name: "one capital ×65,536", text: fill("X") },
  { name: "one small letter ×65,536", text: fill("x") },
  { name: "capitals then one small letter", text: fill("X", MAX_BODY - 1) + "y" },
  { name: "alternating case", text: fill("aB") },
  { name: "letters then a digit", text: fill("a", MAX_BODY - 1) + "1" },
  { name: "version-like runs", text: fill("v1.") },
  { name: "many slashes", text: fill("a/") },
  { name: "only dots but one letter", text: fill(".", MAX_BODY - 1) + "a" },
  { name: "whitespace runs", text: fill(" \t\n", MAX_BODY - 1) + "z" },
  { name: "base64 blob", text: base64Blob(MAX_BODY) },
  { name: "accented letters", text: fill("é") },
  // Near misses of the credentials the secret screen looks for (lib/bus/secrets.ts): each
  // hint over and over, never completing a secret.
  { name: "secret prefixes without keys", text: fill("sk-eyJ-AKIAghp_xox") },
  { name: "database URLs without hosts", text: fill("postgres://a:b") },
  { name: "key headers without bodies", text: fill("-----BEGIN PRIVATE KEY-----...") },
  { name: "token-shaped runs", text: fill("eyJ" + "a".repeat(90) + ".") },
  { name: "emoji", text: fill("😀") },
];

/** A JSON object nested `depth` levels deep. */
export function deepObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
