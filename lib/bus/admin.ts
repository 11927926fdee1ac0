/**
 * The operator's view of the bus (what the admin CLI and the web console
 * need beyond the agents' tools): topics found by id or name, their
 * activity, renaming and deleting, reading a topic's messages in order,
 * and database statistics and upkeep.
 *
 * @module
 */

import { BusError } from "../errors.ts";
import { nextWaitEnd, presenceSince } from "../store/cursors.ts";
import {
  lastMessagePosition,
  lastMessages,
  latestSeq,
  messagesAfter,
  messagesBefore,
  messagesSince,
} from "../store/messages.ts";
import { deleteThreadRows } from "../store/chat/threads.ts";
import { type DbCounts, dbCounts } from "../store/stats.ts";
import {
  bumpTopicsVersion,
  countTopics,
  type DeletedRows,
  deleteTopic as deleteTopicRows,
  getTopic,
  newestTopicByName,
  renameTopic as renameTopicRow,
  type TopicActivity,
  topicActivity,
  type TopicRow,
  type TopicSort,
  type TopicStatusFilter,
  topicSummaryRows,
  topicsVersion,
} from "../store/topics.ts";
import { type Message, toMessage } from "./messages.ts";
import { withChatExtras } from "./chat/extras.ts";
import { type Bus, write } from "./mod.ts";
import { MAX_TOPIC_NAME_CHARS, requireTopic, type Topic, toTopic } from "./topics.ts";
import { cleanName } from "./validate.ts";

/** How long after its last read an agent counts as present. */
export const PRESENCE_WINDOW_SECONDS = 300;

/** A topic with its activity. */
export type TopicSummary = Topic & TopicActivity;

/**
 * The topic an operator means: an exact topic id, else the newest open
 * topic of that name, else the newest closed one.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`
 */
export function findTopic(bus: Bus, ref: string): Topic {
  const row = bus.store.read(() =>
    getTopic(bus.store, ref) ?? newestTopicByName(bus.store, { name: ref, status: "open" }) ??
      newestTopicByName(bus.store, { name: ref, status: "closed" })
  );
  if (!row) {
    throw new BusError("TOPIC_NOT_FOUND", `No topic with id or name "${ref}"`, {
      context: { topic: ref },
    });
  }
  return toTopic(row);
}

/** Which topics {@linkcode topicSummaries} lists, and in what order. */
export interface SummaryArgs {
  status: TopicStatusFilter;
  limit: number;
  /** Only names containing this (case-insensitive for ASCII). */
  nameContains?: string | undefined;
  /** Default `created` (newest first). */
  sort?: TopicSort;
}

/**
 * Topics, each with its message count, last activity and present agents:
 * filtered, sorted and cut by the database in one query.
 */
export function topicSummaries(bus: Bus, args: SummaryArgs): TopicSummary[] {
  const activeSince = bus.now() - PRESENCE_WINDOW_SECONDS;
  return bus.store.read(() =>
    topicSummaryRows(bus.store, {
      status: args.status,
      nameContains: args.nameContains,
      sort: args.sort ?? "created",
      limit: args.limit,
      activeSince,
    }).map(toSummary)
  );
}

/** How many topics match a status and a name filter. */
export function topicCount(
  bus: Bus,
  args: Pick<SummaryArgs, "status" | "nameContains">,
): number {
  return bus.store.read(() => countTopics(bus.store, args));
}

function toSummary(row: TopicRow & TopicActivity): TopicSummary {
  return {
    ...toTopic(row),
    messages: row.messages,
    last_seq: row.last_seq,
    last_message_at: row.last_message_at,
    active_agents: row.active_agents,
    thread_state: row.thread_state,
  };
}

/** A counter that moves whenever a topic is created, closed, renamed or deleted. */
export function topicListVersion(bus: Bus): number {
  return bus.store.read(() => topicsVersion(bus.store));
}

/**
 * The highest seq ever given out in a topic (an index read, whatever the
 * topic's size).
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`
 */
export function topicLatestSeq(bus: Bus, topicId: string): number {
  return bus.store.read(() => {
    requireTopic(bus.store, topicId);
    return latestSeq(bus.store, topicId);
  });
}

/** One topic with its activity. */
export function topicSummary(bus: Bus, topicId: string): TopicSummary {
  const since = bus.now() - PRESENCE_WINDOW_SECONDS;
  return bus.store.read(() => ({
    ...toTopic(requireTopic(bus.store, topicId)),
    ...topicActivity(bus.store, { topicId, activeSince: since }),
  }));
}

/**
 * Rename a topic. Message bodies are left as they are (the original program
 * rewrote them by default).
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function renameTopic(
  bus: Bus,
  args: { topicId: string; name: string },
): Promise<{ topic: Topic; previous: string; changed: boolean }> {
  const { topicId } = args;
  const name = cleanName(args.name, "name", MAX_TOPIC_NAME_CHARS);
  return await write(bus, () => {
    const before = requireTopic(bus.store, topicId);
    if (before.name === name) {
      return { topic: toTopic(before), previous: before.name, changed: false };
    }
    renameTopicRow(bus.store, { topicId, name });
    bumpTopicsVersion(bus.store);
    return {
      topic: toTopic(requireTopic(bus.store, topicId)),
      previous: before.name,
      changed: true,
    };
  });
}

/**
 * Delete a topic with its messages, cursors, reserved names and questions.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`
 */
export async function deleteTopic(bus: Bus, topicId: string): Promise<DeletedRows> {
  return await write(bus, () => {
    requireTopic(bus.store, topicId);
    deleteThreadRows(bus.store, topicId);
    const deleted = deleteTopicRows(bus.store, topicId);
    bumpTopicsVersion(bus.store);
    return deleted;
  });
}

/** Messages of a topic after `afterSeq`, oldest first (at most `limit`). */
export function messagesFrom(
  bus: Bus,
  topicId: string,
  afterSeq: number,
  limit: number,
): Message[] {
  return bus.store.read(() =>
    messagesAfter(bus.store, { topicId, afterSeq, excludeSender: null, limit }).map(toMessage)
  );
}

/** The last `count` messages of a topic, oldest first. */
export function latestMessages(bus: Bus, topicId: string, count: number): Message[] {
  return bus.store.read(() =>
    withChatExtras(bus.store, lastMessages(bus.store, { topicId, limit: count }).map(toMessage))
  );
}

/**
 * One page of a topic's messages, oldest first: after `afterSeq`, or the
 * newest ones before `beforeSeq`, or (neither) the newest ones.
 */
export function messagesPage(
  bus: Bus,
  topicId: string,
  page: { afterSeq?: number; beforeSeq?: number; limit: number },
): { messages: Message[]; has_more: boolean } {
  return bus.store.read(() => {
    requireTopic(bus.store, topicId);
    const n = page.limit + 1;
    const rows = page.afterSeq !== undefined
      ? messagesAfter(bus.store, {
        topicId,
        afterSeq: page.afterSeq,
        excludeSender: null,
        limit: n,
      })
      : page.beforeSeq !== undefined
      ? messagesBefore(bus.store, { topicId, beforeSeq: page.beforeSeq, limit: n })
      : lastMessages(bus.store, { topicId, limit: n });
    const more = rows.length > page.limit;
    // After a seq the extra row is the newest; otherwise the oldest.
    const kept = !more ? rows : page.afterSeq !== undefined ? rows.slice(0, -1) : rows.slice(1);
    return { messages: withChatExtras(bus.store, kept.map(toMessage)), has_more: more };
  });
}

/** A message in the database's global order: `position` only grows. */
export interface MessageEvent {
  position: number;
  message: Message;
}

/** Messages of every topic stored after `position`, in order (at most `limit`). */
export function messagesSincePosition(bus: Bus, position: number, limit: number): MessageEvent[] {
  return bus.store.read(() => {
    const rows = messagesSince(bus.store, { afterId: position, limit });
    const messages = withChatExtras(bus.store, rows.map(toMessage));
    return rows.map((row, i) => ({ position: row.event_id, message: messages[i]! }));
  });
}

/** The position of the newest message (0 when there are none). */
export function latestPosition(bus: Bus): number {
  return bus.store.read(() => lastMessagePosition(bus.store));
}

/** An agent present in a topic, and whether it is waiting (in `sync` or `msg_wait`) or typing now. */
export interface PresentAgent {
  agent_name: string;
  last_seq: number;
  updated_at: number;
  age_seconds: number;
  waiting: boolean;
  typing: boolean;
}

/** Who is present where, and when that next changes by itself (an agent ages out). */
export interface PresenceOverview {
  now: number;
  topics: Record<string, PresentAgent[]>;
  /** Unix time of the next change without a write, if any. */
  next_change_at: number | null;
}

/** Most present agents one overview lists. */
const MAX_PRESENCE_ROWS = 5000;

/** Agents present in every topic, or in `topicId` only (read in the last `windowSeconds`). */
export function presenceOverview(
  bus: Bus,
  options: { windowSeconds?: number; topicId?: string } = {},
): PresenceOverview {
  const now = bus.now();
  const windowSeconds = options.windowSeconds ?? PRESENCE_WINDOW_SECONDS;
  return bus.store.read(() => {
    const rows = presenceSince(bus.store, {
      since: now - windowSeconds,
      now,
      limit: MAX_PRESENCE_ROWS,
      topicId: options.topicId,
    });
    const topics: Record<string, PresentAgent[]> = {};
    let next = nextWaitEnd(bus.store, now) ?? Infinity;
    for (const row of rows) {
      (topics[row.topic_id] ??= []).push({
        agent_name: row.agent_name,
        last_seq: row.last_seq,
        updated_at: row.updated_at,
        age_seconds: Math.max(0, Math.round(now - row.updated_at)),
        waiting: row.waiting === 1,
        typing: row.typing === 1,
      });
      next = Math.min(next, row.updated_at + windowSeconds);
    }
    return { now, topics, next_change_at: Number.isFinite(next) ? next : null };
  });
}

/** Row counts and SQLite facts of the database. */
export function databaseCounts(bus: Bus): DbCounts {
  return bus.store.read(() => dbCounts(bus.store));
}

export type { DbCounts, DeletedRows };
