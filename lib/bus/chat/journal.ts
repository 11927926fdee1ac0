/**
 * The AgentChatBus dialect's journal of changes besides messages (edits,
 * reactions, agents' comings and goings; `store/chat/events.ts`), read in
 * order by the console's event hub so that AgentChatBus's `/events` stream
 * can tell every change, whichever process made it.
 *
 * @module
 */

import { type ChatEventRow, chatEventsAfter, latestChatEvent } from "../../store/chat/events.ts";
import type { Bus } from "../mod.ts";

export type { ChatEventRow } from "../../store/chat/events.ts";

/** The journal's rows after `position`, oldest first, at most `limit`. */
export function chatEventsSince(bus: Bus, position: number, limit: number): ChatEventRow[] {
  return bus.store.read(() => chatEventsAfter(bus.store, position, limit));
}

/** The newest journal row's position (0 when there is none). */
export function latestChatEventPosition(bus: Bus): number {
  return bus.store.read(() => latestChatEvent(bus.store));
}
