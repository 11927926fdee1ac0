/**
 * String helpers for text that comes from outside (headers, URLs, config).
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
