/**
 * The operator's view of the bus (what the admin CLI and the web console
 * need beyond the agents' tools): topics found by id or name, their
 * activity, renaming and deleting, reading a topic's messages in order,
 * and database statistics and upkeep.
 *
 * @module
 */

import { BusError } from "../errors.ts";
import { lastMessages, messagesAfter } from "../store/messages.ts";
import { type DbCounts, dbCounts } from "../store/stats.ts";
import {
  bumpTopicsVersion,
  type DeletedRows,
  deleteTopic as deleteTopicRows,
  getTopic,
  listTopics as listTopicRows,
  newestTopicByName,
  renameTopic as renameTopicRow,
  type TopicActivity,
  topicActivity,
  type TopicStatusFilter,
} from "../store/topics.ts";
import { type Message, toMessage } from "./messages.ts";
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
    getTopic(bus.store, ref) ?? newestTopicByName(bus.store, ref, "open") ??
      newestTopicByName(bus.store, ref, "closed")
  );
  if (!row) {
    throw new BusError("TOPIC_NOT_FOUND", `No topic with id or name "${ref}"`, {
      context: { topic: ref },
    });
  }
  return toTopic(row);
}

/** Topics newest first, each with its message count, last activity and present agents. */
export function topicSummaries(
  bus: Bus,
  args: { status: TopicStatusFilter; limit: number },
): TopicSummary[] {
  const since = bus.now() - PRESENCE_WINDOW_SECONDS;
  return bus.store.read(() =>
    listTopicRows(bus.store, args.status, args.limit).map((row) => ({
      ...toTopic(row),
      ...topicActivity(bus.store, row.topic_id, since),
    }))
  );
}

/** One topic with its activity. */
export function topicSummary(bus: Bus, topicId: string): TopicSummary {
  const since = bus.now() - PRESENCE_WINDOW_SECONDS;
  return bus.store.read(() => ({
    ...toTopic(requireTopic(bus.store, topicId)),
    ...topicActivity(bus.store, topicId, since),
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
  topicId: string,
  newName: string,
): Promise<{ topic: Topic; previous: string; changed: boolean }> {
  const name = cleanName(newName, "name", MAX_TOPIC_NAME_CHARS);
  return await write(bus, () => {
    const before = requireTopic(bus.store, topicId);
    if (before.name === name) {
      return { topic: toTopic(before), previous: before.name, changed: false };
    }
    renameTopicRow(bus.store, topicId, name);
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
  return bus.store.read(() => lastMessages(bus.store, topicId, count).map(toMessage));
}

/** Row counts and SQLite facts of the database. */
export function databaseCounts(bus: Bus): DbCounts {
  return bus.store.read(() => dbCounts(bus.store));
}

export type { DbCounts, DeletedRows };
