/**
 * How large a request either transport reads.
 *
 * @module
 */

import type { ResolvedConfig } from "../config.ts";

/**
 * The longest request worth reading: a full outbox of maximal messages,
 * each character JSON-escaped to six bytes, plus room for the rest.
 */
export function maxMessageBytes(config: ResolvedConfig): number {
  return Math.max(
    16 << 20,
    config.maxOutbox * config.maxMessageChars * 6 + (1 << 20),
    // A chatbus post with four images, base64 (4/3) and JSON-escaped.
    Math.ceil(config.maxAttachmentBytes * 4 * 4 / 3) + (1 << 20),
  );
}
