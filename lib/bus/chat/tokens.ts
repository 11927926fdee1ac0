/**
 * Reply tokens: the single-use, thread-scoped half of the sync context
 * (research 2.9). Only their hashes are stored; the session that received
 * a token remembers it, so a `msg_wait` that times out can hand the same
 * token back instead of minting another.
 *
 * Call these inside a write transaction.
 *
 * @module
 */

import {
  getReplyToken,
  insertReplyToken,
  type ReplyTokenRow,
  unusedTokenHashes,
} from "../../store/chat/mod.ts";
import { latestSeq } from "../../store/messages.ts";
import type { Session } from "../session.ts";
import type { Bus } from "../mod.ts";
import { hashSecret, newReplyToken, REPLY_WINDOW, type SyncContext } from "./wire.ts";

/** Tokens one session remembers in plain text (for reuse after a timeout). */
const MAX_REMEMBERED_TOKENS = 256;

/** Where a token came from (AgentChatBus's `source`). */
export type TokenSource =
  | "thread_create"
  | "bus_connect"
  | "msg_wait"
  | "msg_post_chain"
  | "sync_context";

/** Issue a new token for `agentId` (null: unbound) at the thread's latest seq. */
export function issueSyncContext(
  bus: Bus,
  session: Session,
  { topicId, agentId, source, currentSeq }: {
    topicId: string;
    agentId: string | null;
    source: TokenSource;
    /** The thread's latest seq, when the caller knows it (saves a read). */
    currentSeq?: number;
  },
): SyncContext {
  const token = newReplyToken();
  const tokenHash = hashSecret(token);
  insertReplyToken(bus.store, {
    token_hash: tokenHash,
    topic_id: topicId,
    agent_id: agentId,
    source,
    issued_at: bus.now(),
  });
  session.replyTokens.set(tokenHash, token);
  // Only the newest tokens can be reused; forget the oldest beyond a bound.
  if (session.replyTokens.size > MAX_REMEMBERED_TOKENS) {
    session.replyTokens.delete(session.replyTokens.keys().next().value!);
  }
  return syncContext(bus, topicId, token, currentSeq);
}

/**
 * For a wait that ends with nothing new: the newest of the agent's unused
 * tokens that this session holds, handed back as it is (repeated timeouts
 * reuse one token), else a fresh one for this session. Either way no token
 * is retired: another session of the same agent may hold one (only hashes
 * are stored, so it cannot be handed back here), and a wait that merely
 * timed out must not make that session's post fail.
 */
export function reuseOrIssue(
  bus: Bus,
  session: Session,
  { topicId, agentId }: { topicId: string; agentId: string },
): SyncContext {
  const hashes = unusedTokenHashes(bus.store, { topicId, agentId, limit: MAX_REMEMBERED_TOKENS });
  const held = hashes.find((hash) => session.replyTokens.has(hash));
  if (held !== undefined) return syncContext(bus, topicId, session.replyTokens.get(held)!);
  return issueSyncContext(bus, session, { topicId, agentId, source: "msg_wait" });
}

/** The stored record of a presented token. */
export function findReplyToken(bus: Bus, token: string): ReplyTokenRow | undefined {
  return token.length > 256 ? undefined : getReplyToken(bus.store, hashSecret(token));
}

function syncContext(
  bus: Bus,
  topicId: string,
  token: string,
  currentSeq = latestSeq(bus.store, topicId),
): SyncContext {
  return {
    current_seq: currentSeq,
    reply_token: token,
    reply_window: REPLY_WINDOW,
  };
}
