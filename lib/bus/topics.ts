/**
 * Topics: create (reuse or new), list, resolve by name, close.
 *
 * "reuse" looks up and inserts inside one `BEGIN IMMEDIATE`, so two agents
 * creating the same topic at the same instant get the same topic.
 *
 * @module
 */

import { countWithinBudget } from "../budget.ts";
import { BusError, invalidArgument, type Warning } from "../errors.ts";
import {
  bumpTopicsVersion,
  closeTopic as closeTopicRow,
  getTopic,
  insertTopic,
  listTopics as listTopicRows,
  newestTopicByName,
  type TopicRow,
  type TopicStatusFilter,
} from "../store/topics.ts";
import type { Store } from "../store/mod.ts";
import { encodeCursor, parseCursor } from "./cursor.ts";
import { newId } from "./ids.ts";
import { type Bus, write } from "./mod.ts";
import { cleanName, cleanOptionalText, metadataJson, parseMetadata } from "./validate.ts";

/** Longest topic name. */
export const MAX_TOPIC_NAME_CHARS = 200;
/** Longest close reason. */
export const MAX_CLOSE_REASON_CHARS = 2000;
/** Most topics one listing returns. */
export const MAX_TOPIC_LIST = 1000;

/** A topic as tools return it. */
export interface Topic {
  topic_id: string;
  name: string;
  status: "open" | "closed";
  created_at: number;
  closed_at: number | null;
  close_reason: string | null;
  metadata: Record<string, unknown> | null;
}

/** Convert a stored row to its wire shape. */
export function toTopic(row: TopicRow): Topic {
  return {
    topic_id: row.topic_id,
    name: row.name,
    status: row.status,
    created_at: row.created_at,
    closed_at: row.closed_at,
    close_reason: row.close_reason,
    metadata: parseMetadata(row.metadata_json),
  };
}

/**
 * The topic with this id.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`
 */
export function requireTopic(store: Store, topicId: string): TopicRow {
  const row = getTopic(store, topicId);
  if (!row) {
    throw new BusError("TOPIC_NOT_FOUND", `Topic "${topicId}" not found`, {
      context: { topic_id: topicId },
    });
  }
  return row;
}

/**
 * Create a topic, or with mode "reuse" return the newest open topic of that name.
 *
 * @returns the topic and whether it already existed
 */
export async function createTopic(
  bus: Bus,
  args: { name?: string; metadata?: Record<string, unknown> | null; mode: "reuse" | "new" },
): Promise<{ topic: Topic; reused: boolean }> {
  const name = args.name === undefined
    ? undefined
    : cleanName(args.name, "name", MAX_TOPIC_NAME_CHARS);
  const metadata = metadataJson(args.metadata, "metadata", bus.config.maxMetadataChars);
  return await write(bus, () => {
    if (args.mode === "reuse" && name !== undefined) {
      const existing = newestTopicByName(bus.store, { name, status: "open" });
      if (existing) return { topic: toTopic(existing), reused: true };
    }
    return { topic: toTopic(insertNewTopic(bus, { name, metadataJson: metadata })), reused: false };
  });
}

/** Insert a new open topic (named `topic-<id>` without a name); call inside a write transaction. */
export function insertNewTopic(
  bus: Bus,
  { name, metadataJson }: { name: string | undefined; metadataJson: string | null },
): TopicRow {
  const topicId = uniqueTopicId(bus.store);
  const row: TopicRow = {
    topic_id: topicId,
    name: name ?? `topic-${topicId}`,
    created_at: bus.now(),
    status: "open",
    closed_at: null,
    close_reason: null,
    metadata_json: metadataJson,
  };
  insertTopic(bus.store, row);
  bumpTopicsVersion(bus.store);
  return row;
}

/**
 * Topics with this status, newest first (after `cursor`, a `nextCursor` of
 * an earlier page), as many as `limit` and the result budget allow; whether
 * more exist, the cursor of the rest, and whether the budget stopped it.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a cursor that is not one
 */
export function listTopics(
  bus: Bus,
  args: { status: TopicStatusFilter; limit: number; cursor?: string | undefined },
): { topics: Topic[]; hasMore: boolean; nextCursor: string | null; cutByBudget: boolean } {
  const after = args.cursor === undefined ? undefined : parseCursor(args.cursor, "topic_list");
  const before = after && { at: after.at, position: Number(after.key) };
  if (before && !Number.isSafeInteger(before.position)) {
    throw invalidArgument("cursor must be the next_cursor of an earlier topic_list call");
  }
  const rows = bus.store.read(() =>
    listTopicRows(bus.store, { status: args.status, limit: args.limit + 1, before })
  );
  const within = rows.slice(0, args.limit);
  // A result holds what fits its budget; the rest is on the next page.
  const fit = countWithinBudget(
    within,
    (row) => [row.topic_id, row.name, row.metadata_json, row.close_reason],
    bus.config.toolResultMaxBytes,
  );
  const hasMore = rows.length > fit;
  const last = within[fit - 1];
  return {
    topics: within.slice(0, fit).map(toTopic),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(last.created_at, last.position) : null,
    cutByBudget: fit < within.length,
  };
}

/**
 * The newest open topic with this exact name; with `allowClosed`, the newest
 * closed one when none is open.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export function resolveTopic(bus: Bus, args: { name: string; allowClosed: boolean }): Topic {
  const name = cleanName(args.name, "name", MAX_TOPIC_NAME_CHARS);
  return toTopic(bus.store.read(() => findByName(bus.store, name, args.allowClosed)));
}

/** {@linkcode resolveTopic} for callers already inside a transaction. */
export function findByName(store: Store, name: string, allowClosed: boolean): TopicRow {
  const row = newestTopicByName(store, { name, status: "open" }) ??
    (allowClosed ? newestTopicByName(store, { name, status: "closed" }) : undefined);
  if (!row) {
    const hint = allowClosed ? "" : " (pass allow_closed=true to include closed topics)";
    throw new BusError("TOPIC_NOT_FOUND", `No open topic named "${name}"${hint}`, {
      context: { name },
    });
  }
  return row;
}

/**
 * Close a topic. Closing a closed topic changes nothing and warns `ALREADY_CLOSED`.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`
 */
export async function closeTopic(
  bus: Bus,
  args: { topicId: string; reason?: string | null },
): Promise<{ topic: Topic; warnings: Warning[] }> {
  const reason = cleanOptionalText(args.reason, "reason", MAX_CLOSE_REASON_CHARS);
  return await write(bus, () => {
    const before = requireTopic(bus.store, args.topicId);
    if (before.status === "closed") {
      return {
        topic: toTopic(before),
        warnings: [{
          code: "ALREADY_CLOSED",
          message: `Topic "${args.topicId}" was already closed`,
          context: { topic_id: args.topicId },
        }],
      };
    }
    closeTopicRow(bus.store, { topicId: args.topicId, closedAt: bus.now(), reason });
    bumpTopicsVersion(bus.store);
    return { topic: toTopic(requireTopic(bus.store, args.topicId)), warnings: [] };
  });
}

function uniqueTopicId(store: Store): string {
  for (;;) {
    const id = newId();
    if (!getTopic(store, id)) return id;
  }
}
