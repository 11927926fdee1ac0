/**
 * Fair turns in a chatbus thread: an agent that keeps losing races (its
 * posts refused because another landed first) is owed a turn, and the
 * others give way to it, in the order of their first refusal.
 *
 * The order is kept where agents wait anyway: an agent that just lost a
 * race waits in its `msg_wait` ({@linkcode awaitTurn}) until the agents
 * owed a turn before it have posted, and then races for the message after
 * theirs instead of losing again; a post by an agent owed nothing (a winner
 * posting on) learns with its own reads whether it owes a turn and gives way
 * ({@linkcode giveWay}). Neither holds a lock while it waits. Only an agent
 * that has been losing for {@linkcode OWED_AFTER_MS} is waited for: in a
 * tight race every post but one loses, and waiting for each one-time loser
 * cost more than half the thread's posts while shares stayed fair anyway.
 *
 * @module
 */

import { type TurnState, turnState } from "../../store/chat/mod.ts";
import type { Bus } from "../mod.ts";
import { waitFor } from "../waiting.ts";

/** How long a post gives way to agents owed a turn before it. */
export const YIELD_MS = 500;

/**
 * How long an agent must have been losing races before others wait for it:
 * one lost race is the price of racing; losing for longer is what turns stop.
 */
export const OWED_AFTER_MS = 25;

/** How long an agent owed a turn counts as still racing after its latest refusal. */
export const RACING_MS = 2000;

/** Who is owed a turn before `author`'s post, as {@linkcode turnState} asks. */
export function turnQuestion(bus: Bus, threadId: string, author: string) {
  const now = bus.now();
  return {
    topicId: threadId,
    agentId: author,
    racingSince: now - RACING_MS / 1000,
    owedBefore: now - OWED_AFTER_MS / 1000,
  };
}

/** Whether `author` owes another agent its turn in the thread now (a read). */
function owedTurn(bus: Bus, threadId: string, author: string): TurnState | undefined {
  const state = bus.store.read(() => turnState(bus.store, turnQuestion(bus, threadId, author)));
  return state?.contested ? state : undefined;
}

/**
 * Before a post that owes a turn (`owing`:
 * another agent that has been losing races for {@linkcode OWED_AFTER_MS}
 * and still races, refused since the latest message or within
 * {@linkcode RACING_MS}, was refused before the poster was, or the poster
 * never was), wait at most {@linkcode YIELD_MS}, no lock held. Return as
 * soon as the thread moves on or no such agent is left.
 */
export async function giveWay(
  bus: Bus,
  threadId: string,
  author: string,
  owing: TurnState,
): Promise<void> {
  await waitFor(
    bus,
    () => {
      const now = owedTurn(bus, threadId, author);
      return !now || now.seq !== owing.seq ? true : undefined;
    },
    YIELD_MS / 1000,
    { topics: [threadId] },
  );
}

/**
 * Before an agent that just lost a race reads on: while another agent owed a
 * turn before it still races, wait (at most {@linkcode YIELD_MS}, no lock
 * held) so that agent posts first and this one races for the message after,
 * instead of losing again. Messages that wait are delivered with the rest.
 */
export async function awaitTurn(
  bus: Bus,
  threadId: string,
  author: string,
  seconds: number,
): Promise<void> {
  await waitFor(
    bus,
    () => owedTurn(bus, threadId, author) ? undefined : true,
    Math.min(seconds, YIELD_MS / 1000),
    { topics: [threadId] },
  );
}
