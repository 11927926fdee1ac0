/**
 * SQL for the single-use reply tokens of the AgentChatBus dialect
 * (`bus_reply_tokens`, keyed by topic): issued, consumed, invalidated and
 * pruned so the table stays bounded. Stored only as SHA-256 hashes.
 *
 * @module
 */

import { type Store, TOPIC_ROWS } from "../types.ts";

/** A row of `bus_reply_tokens`. */
export interface ReplyTokenRow {
  token_hash: string;
  topic_id: string;
  agent_id: string | null;
  source: string;
  issued_at: number;
  consumed_at: number | null;
}

/**
 * Consumed tokens are kept this long (a replay within it is reported as a
 * replay; later, as an unknown token: both tell the agent to call msg_wait).
 */
const CONSUMED_TOKEN_KEEP_SECONDS = 600;
/** Unbound tokens (anonymous msg_wait) never used are dropped after this long. */
const UNUSED_UNBOUND_KEEP_SECONDS = 86_400;

/**
 * Store a newly issued reply token, and drop the same holder's tokens that
 * are past keeping, so the table stays bounded however many are issued.
 */
export function insertReplyToken(store: Store, row: Omit<ReplyTokenRow, "consumed_at">): void {
  store.stmt(
    `INSERT INTO bus_reply_tokens (token_hash, topic_id, agent_id, source, issued_at, consumed_at)
     VALUES (?, ?, ?, ?, ?, NULL)`,
    TOPIC_ROWS,
  ).run(row.token_hash, row.topic_id, row.agent_id, row.source, row.issued_at);
  // Two range deletes on the (topic, agent, consumed_at) index: one statement with an OR would
  // scan all of the holder's tokens on every post.
  store.stmt(
    "DELETE FROM bus_reply_tokens WHERE topic_id = ? AND agent_id IS ? AND consumed_at < ?",
    TOPIC_ROWS,
  ).run(row.topic_id, row.agent_id, row.issued_at - CONSUMED_TOKEN_KEEP_SECONDS);
  if (row.agent_id === null) {
    store.stmt(
      `DELETE FROM bus_reply_tokens WHERE topic_id = ? AND agent_id IS NULL
         AND consumed_at IS NULL AND issued_at < ?`,
      TOPIC_ROWS,
    ).run(row.topic_id, row.issued_at - UNUSED_UNBOUND_KEEP_SECONDS);
  }
}

/** The statement of {@linkcode getReplyToken}, for a batch of reads (`Store.gather`). */
export const GET_REPLY_TOKEN_SQL = "SELECT * FROM bus_reply_tokens WHERE token_hash = ?";

/** The token with this hash. */
export function getReplyToken(store: Store, tokenHash: string): ReplyTokenRow | undefined {
  return store.stmt(GET_REPLY_TOKEN_SQL).get(tokenHash) as
    | ReplyTokenRow
    | undefined;
}

/** Mark one token used. */
export function consumeReplyToken(
  store: Store,
  { tokenHash, now }: { tokenHash: string; now: number },
): void {
  store.stmt("UPDATE bus_reply_tokens SET consumed_at = ? WHERE token_hash = ?").run(
    now,
    tokenHash,
  );
}

/**
 * Mark an agent's unused tokens in a thread used: all of them, those of one
 * `source`, or all but `exceptHash`.
 */
export function invalidateReplyTokens(
  store: Store,
  { topicId, agentId, source, exceptHash, now }: {
    topicId: string;
    agentId: string;
    source?: string;
    exceptHash?: string;
    now: number;
  },
): void {
  store.stmt(
    `UPDATE bus_reply_tokens SET consumed_at = ?
     WHERE topic_id = ? AND agent_id = ? AND consumed_at IS NULL
       AND (CAST(? AS TEXT) IS NULL OR source = ?) AND (CAST(? AS TEXT) IS NULL OR token_hash <> ?)`,
    TOPIC_ROWS,
  ).run(
    now,
    topicId,
    agentId,
    source ?? null,
    source ?? null,
    exceptHash ?? null,
    exceptHash ?? null,
  );
}

/** Hashes of an agent's unused tokens in a thread, newest first (at most `limit`). */
export function unusedTokenHashes(
  store: Store,
  { topicId, agentId, limit }: { topicId: string; agentId: string; limit: number },
): string[] {
  return (store.stmt(
    `SELECT token_hash FROM bus_reply_tokens
     WHERE topic_id = ? AND agent_id = ? AND consumed_at IS NULL
     ORDER BY issued_at DESC LIMIT ?`,
  ).all<{ token_hash: string }>(topicId, agentId, limit)).map((row) => row.token_hash);
}
