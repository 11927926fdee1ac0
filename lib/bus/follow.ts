/**
 * Following a topic live: every message after a seq, in order, as it is
 * committed by any process, until the topic closes or the caller stops.
 * What `agent-bus watch` prints. It reads only, and waits on the change feed
 * between batches, so it costs nothing while the topic is quiet.
 *
 * @module
 */

import { messagesFrom, topicSummary } from "./admin.ts";
import type { Message } from "./messages.ts";
import type { Bus } from "./mod.ts";
import { AGAIN, onEachChange } from "./waiting.ts";

/** Messages read per query while catching up. */
const BATCH = 500;

/** Options of {@linkcode followTopic}. */
export interface FollowOptions {
  /** Start after this seq. */
  afterSeq: number;
  /** Stops following. */
  signal: AbortSignal;
  /** Called once per message, in seq order. */
  onMessage(message: Message): void;
}

/**
 * Follow `topicId` until it is closed (and fully read) or `signal` aborts.
 *
 * @returns `"closed"` or `"stopped"`
 * @throws {BusError} `TOPIC_NOT_FOUND` when the topic is (or gets) deleted
 */
export async function followTopic(
  bus: Bus,
  topicId: string,
  options: FollowOptions,
): Promise<"closed" | "stopped"> {
  let after = options.afterSeq;
  const ended = await onEachChange(bus, { signal: options.signal }, () => {
    const batch = messagesFrom(bus, topicId, after, BATCH);
    batch.forEach(options.onMessage);
    after = batch.at(-1)?.seq ?? after;
    if (batch.length === BATCH) return AGAIN;
    if (batch.length === 0 && topicSummary(bus, topicId).status === "closed") return "closed";
    return undefined;
  });
  return ended ?? "stopped";
}
