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

/** Random bytes drawn from the system's generator a page at a time (one call per 4 KiB, not per id). */
const pool = new Uint8Array(4096);
let used = pool.length;
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let hex = "";
  for (const end = used + bytes; used < end; used++) hex += HEX[pool[used]!];
  return hex;
}
