/**
 * Joining a topic under a unique agent name (spec v6.3 section 4.6).
 *
 * The first join of a name reserves it and returns a reclaim token; a later
 * join of the same name must present that token, otherwise it fails with
 * `AGENT_NAME_IN_USE` and a list of free names to choose from. A name that
 * has a cursor but no reservation (a peer from before reservations existed)
 * is adopted by the first join that claims it.
 *
 * @module
 */

import { BusError, invalidArgument } from "../errors.ts";
import { hasCursor } from "../store/cursors.ts";
import {
  getReservation,
  insertReservation,
  reservedNames,
  touchReservation,
} from "../store/names.ts";
import { timingSafeEqual } from "../strings.ts";
import { newToken } from "./ids.ts";
import { type Bus, write } from "./mod.ts";
import type { Session } from "./session.ts";
import { findByName, MAX_TOPIC_NAME_CHARS, requireTopic, toTopic } from "./topics.ts";
import { cleanName } from "./validate.ts";

/** Longest agent name. */
export const MAX_AGENT_NAME_CHARS = 64;
/** Longest reclaim token accepted. */
export const MAX_TOKEN_CHARS = 256;

const SUGGESTION_PATTERNS = [
  (n: string) => `${n} reviewer`,
  (n: string) => `${n} frontend`,
  (n: string) => `${n} architect`,
  (n: string) => `${n} implementer`,
  (n: string) => `${n} researcher`,
  (n: string) => `blue ${n}`,
  (n: string) => `curious ${n}`,
  (n: string) => `steady ${n}`,
  (n: string) => `swift ${n}`,
];

/** Arguments of {@linkcode joinTopic}. */
export interface JoinArgs {
  agentName: string;
  topicId?: string;
  name?: string;
  allowClosed: boolean;
  reclaimToken?: string;
}

/** What a successful join returns. */
export interface JoinResult {
  topic_id: string;
  name: string;
  status: "open" | "closed";
  agent_name: string;
  reclaim_token: string;
  /** True when the name was already reserved and the token reclaimed it. */
  reclaimed: boolean;
}

/**
 * Join a topic as `agentName` and record the identity in `session`.
 *
 * @throws {BusError} `INVALID_ARGUMENT`, `TOPIC_NOT_FOUND`, `AGENT_NAME_IN_USE`
 */
export async function joinTopic(bus: Bus, session: Session, args: JoinArgs): Promise<JoinResult> {
  const agentName = cleanName(args.agentName, "agent_name", MAX_AGENT_NAME_CHARS);
  if (args.topicId !== undefined && args.name !== undefined) {
    throw invalidArgument("Provide exactly one of topic_id or name, not both");
  }
  if (args.topicId === undefined && args.name === undefined) {
    throw invalidArgument("Provide topic_id or name");
  }
  let token: string | undefined;
  if (args.reclaimToken !== undefined) {
    token = args.reclaimToken.trim();
    if (!token) throw invalidArgument("reclaim_token must be a non-empty string");
    if (token.length > MAX_TOKEN_CHARS) {
      throw invalidArgument(`reclaim_token exceeds max length (${MAX_TOKEN_CHARS})`);
    }
  }
  const result = await write(bus, () => {
    const topic = args.topicId !== undefined ? requireTopic(bus.store, args.topicId) : findByName(
      bus.store,
      cleanName(args.name!, "name", MAX_TOPIC_NAME_CHARS),
      args.allowClosed,
    );
    const now = bus.now();
    const held = session.get(topic.topic_id);
    // This session already holds the name: its own token is the proof.
    const proof = token ?? (held?.agentName === agentName ? held.reclaimToken : undefined);
    const reservation = getReservation(bus.store, { topicId: topic.topic_id, agentName });
    let reclaimToken: string;
    let reclaimed = false;
    if (!reservation) {
      reclaimToken = newToken();
      insertReservation(bus.store, {
        topic_id: topic.topic_id,
        agent_name: agentName,
        reclaim_token: reclaimToken,
        created_at: now,
        last_claimed_at: now,
      });
      reclaimed = hasCursor(bus.store, { topicId: topic.topic_id, agentName });
    } else if (proof !== undefined && timingSafeEqual(proof, reservation.reclaim_token)) {
      reclaimToken = reservation.reclaim_token;
      touchReservation(bus.store, { topicId: topic.topic_id, agentName, now });
      reclaimed = true;
    } else {
      const suggestions = suggestNames(agentName, reservedNames(bus.store, topic.topic_id));
      const why = token === undefined ? "no reclaim_token was given" : "the reclaim_token is wrong";
      throw new BusError(
        "AGENT_NAME_IN_USE",
        `Agent name "${agentName}" is already reserved in topic "${topic.topic_id}" and ${why}. ` +
          `Join with the reclaim_token you saved, or pick another name such as "${suggestions[0]}"`,
        {
          context: {
            topic_id: topic.topic_id,
            requested_agent_name: agentName,
            suggested_agent_names: suggestions,
          },
        },
      );
    }
    session.record?.joined(bus.store, topic.topic_id, agentName);
    return {
      ...toTopic(topic),
      agent_name: agentName,
      reclaim_token: reclaimToken,
      reclaimed,
    };
  });
  session.set({ topicId: result.topic_id, agentName, reclaimToken: result.reclaim_token });
  return {
    topic_id: result.topic_id,
    name: result.name,
    status: result.status,
    agent_name: result.agent_name,
    reclaim_token: result.reclaim_token,
    reclaimed: result.reclaimed,
  };
}

/** Up to nine free variants of a taken name, always in the same order. */
export function suggestNames(agentName: string, taken: ReadonlySet<string>): string[] {
  const base = agentName.length > MAX_AGENT_NAME_CHARS - 12
    ? agentName.slice(0, MAX_AGENT_NAME_CHARS - 12).trim()
    : agentName;
  const free = SUGGESTION_PATTERNS.map((make) => make(base)).filter((name) => !taken.has(name));
  for (let n = 2; free.length < 3; n++) {
    const candidate = `${base} ${n}`;
    if (!taken.has(candidate)) free.push(candidate);
  }
  return free;
}
