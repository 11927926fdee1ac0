/**
 * String helpers for text that comes from outside (headers, URLs, config,
 * secrets).
 *
 * Hazard: `/\/+$/` and its kin look harmless but backtrack quadratically on
 * a long run of the repeated character followed by anything else (48 KiB of
 * slashes in an `Origin` header took seconds). These are plain loops.
 *
 * @module
 */

/** `text` without the `/` characters it ends with. Linear. */
export function trimTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * Compare two secrets (tokens) in time that depends only on their lengths,
 * never on where they differ. Linear in the longer one.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
