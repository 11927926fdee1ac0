/**
 * Appending messages to a topic, as every send does inside its write
 * transaction whichever dialect sent it (a v6.3 `sync` or CLI post, a
 * chatbus `msg_post`): fresh message ids, then the topic's next seq, the
 * inserts and the topics version, in that order: on PostgreSQL what is the
 * topic's own (its counter, the messages' index rows) is written before the
 * commit lock that the messages take (`lib/store/postgres/locks.ts`).
 *
 * @module
 */

import {
  insertMessages,
  type NewMessageRow,
  setNextSeq,
  takenMessageIds,
} from "../store/messages.ts";
import type { Store } from "../store/mod.ts";
import { bumpTopicsVersion } from "../store/topics.ts";
import { newId } from "./ids.ts";

/** Longest message id (a `reply_to`). */
export const MAX_MESSAGE_ID_CHARS = 64;

/**
 * Store `rows`, whose seqs follow on from the topic's next seq without a
 * gap, and move the topic's next seq past them. Call inside a write
 * transaction that read the next seq.
 */
export function appendMessages(
  store: Store,
  { topicId, rows, now }: { topicId: string; rows: readonly NewMessageRow[]; now: number },
): void {
  if (rows.length === 0) return;
  setNextSeq(store, { topicId, next: rows.at(-1)!.seq + 1, now });
  insertMessages(store, rows);
  bumpTopicsVersion(store);
}

/** A fresh message id; a random one is taken only with negligible odds, but then drawn again. */
export function unusedMessageId(store: Store): string {
  return unusedMessageIds(store, 1)[0]!;
}

/** `count` fresh message ids, checked in one query. */
export function unusedMessageIds(store: Store, count: number): string[] {
  for (;;) {
    const ids = Array.from({ length: count }, newId);
    if (new Set(ids).size === count && takenMessageIds(store, ids).size === 0) return ids;
  }
}
