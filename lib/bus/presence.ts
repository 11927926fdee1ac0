/**
 * Presence (`topic_presence`) and cursor control (`cursor_reset`), both read
 * from and written to the `cursors` table (seed sections 4.4 and 4.5).
 *
 * @module
 */

import { invalidArgument } from "../errors.ts";
import { recentCursors, setCursor } from "../store/cursors.ts";
import { latestSeq } from "../store/messages.ts";
import { type Bus, write } from "./mod.ts";
import type { Identity } from "./session.ts";
import { requireTopic } from "./topics.ts";

/** Most peers one presence listing returns. */
export const MAX_PRESENCE_LIMIT = 1000;

/** One recently active peer. */
export interface Peer {
  agent_name: string;
  last_seq: number;
  updated_at: number;
  age_seconds: number;
}

/** `topic_presence`'s structured output. */
export interface PresenceResult {
  topic_id: string;
  window_seconds: number;
  limit: number;
  now: number;
  peers: Peer[];
  count: number;
}

/**
 * Peers active in the last `windowSeconds`, most recent first.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export function topicPresence(
  bus: Bus,
  args: { topicId: string; windowSeconds: number; limit: number },
): PresenceResult {
  if (args.windowSeconds <= 0) throw invalidArgument("window_seconds must be an int > 0");
  if (args.limit <= 0) throw invalidArgument("limit must be an int > 0");
  const now = bus.now();
  const rows = bus.store.read(() => {
    requireTopic(bus.store, args.topicId);
    return recentCursors(bus.store, {
      topicId: args.topicId,
      since: now - args.windowSeconds,
      limit: args.limit,
    });
  });
  const peers = rows.map((row) => ({
    agent_name: row.agent_name,
    last_seq: row.last_seq,
    updated_at: row.updated_at,
    age_seconds: Math.max(0, Math.round((now - row.updated_at) * 1000) / 1000),
  }));
  return {
    topic_id: args.topicId,
    window_seconds: args.windowSeconds,
    limit: args.limit,
    now,
    peers,
    count: peers.length,
  };
}

/** `cursor_reset`'s structured output. */
export interface CursorResetResult {
  topic_id: string;
  agent_name: string;
  cursor: { last_seq: number; updated_at: number };
}

/**
 * Move this peer's cursor to `lastSeq` (backwards to replay, or forwards to skip).
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function cursorReset(
  bus: Bus,
  identity: Identity,
  args: { topicId: string; lastSeq: number },
): Promise<CursorResetResult> {
  if (args.lastSeq < 0) throw invalidArgument("last_seq must be an int >= 0");
  return await write(bus, () => {
    requireTopic(bus.store, args.topicId);
    const latest = latestSeq(bus.store, args.topicId);
    if (args.lastSeq > latest) {
      throw invalidArgument(`last_seq exceeds latest message seq (${latest})`);
    }
    const now = bus.now();
    setCursor(bus.store, {
      topicId: args.topicId,
      agentName: identity.agentName,
      lastSeq: args.lastSeq,
      now,
    });
    return {
      topic_id: args.topicId,
      agent_name: identity.agentName,
      cursor: { last_seq: args.lastSeq, updated_at: now },
    };
  });
}
