/**
 * Identifiers and secrets.
 *
 * Topic and message ids are 12 hex characters (48 random bits): short enough
 * for an agent to copy into `reply_to`, long enough that collisions are
 * rare; an insert that still collides is retried with a fresh id. Reclaim
 * tokens are 128 random bits.
 *
 * @module
 */

/** A new topic or message id. */
export function newId(): string {
  return randomHex(6);
}

/** A new reclaim token. */
export function newToken(): string {
  return randomHex(16);
}

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buffer, (b) => b.toString(16).padStart(2, "0")).join("");
}
