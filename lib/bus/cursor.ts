/**
 * The cursors of lists that a page or the result budget cuts (`topic_list`,
 * `agent_list`, `template_list`): the sort key of the last item shown, a
 * number and a tie-breaker, as `number~key`. Opaque to callers, exact (the
 * number is written as JavaScript writes it, so it reads back the same), and
 * checked when read back.
 *
 * @module
 */

import { invalidArgument } from "../errors.ts";

/** Where a page ended: the last item's sort number and tie-breaker. */
export interface PageCursor {
  at: number;
  key: string;
}

/** Longest cursor read back. */
const MAX_CURSOR_CHARS = 300;

/** The cursor that continues after an item with this sort number and tie-breaker. */
export function encodeCursor(at: number, key: string | number): string {
  return `${at}~${key}`;
}

/**
 * A cursor read back.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for anything `encodeCursor` did not write
 */
export function parseCursor(text: string, tool: string): PageCursor {
  const cut = text.indexOf("~");
  const at = cut > 0 ? Number(text.slice(0, cut)) : NaN;
  const key = text.slice(cut + 1);
  if (text.length > MAX_CURSOR_CHARS || !Number.isFinite(at) || key === "") {
    throw invalidArgument(`cursor must be the next_cursor of an earlier ${tool} call`);
  }
  return { at, key };
}
