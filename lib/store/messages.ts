/**
 * SQL for `messages` and `topic_seq`.
 *
 * Sequence numbers come from `topic_seq.next_seq`, never from `MAX(seq)`, so
 * a deleted message's seq is never handed out again. A topic made by another
 * program may lack its `topic_seq` row; it is created from the messages.
 *
 * @module
 */

import { type Query, type Store, TOPIC_ROWS } from "./types.ts";
import { indexesWithTheSend } from "./search.ts";

/** A row of `messages`. */
export interface MessageRow {
  message_id: string;
  topic_id: string;
  seq: number;
  sender: string;
  message_type: string;
  reply_to: string | null;
  content_markdown: string;
  metadata_json: string | null;
  client_message_id: string | null;
  created_at: number;
}

/**
 * A message to insert, with its code terms (see `terms.ts`), derived before
 * the write lock is taken where the index row goes in with the message
 * (empty elsewhere).
 */
export type NewMessageRow = MessageRow & { terms: string };

/** The statements that read a topic's next seq, creating its `topic_seq` row if missing. */
export function nextSeqQueries(topicId: string, now: number): [Query, Query] {
  return [
    {
      sql: `INSERT OR IGNORE INTO topic_seq (topic_id, next_seq, updated_at)
            SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM messages WHERE topic_id = ?`,
      params: [topicId, now, topicId],
      scope: TOPIC_ROWS,
    },
    { sql: "SELECT next_seq FROM topic_seq WHERE topic_id = ?", params: [topicId] },
  ];
}

/** The next seq to allocate in a topic, creating its `topic_seq` row if missing. */
export function nextSeq(store: Store, { topicId, now }: { topicId: string; now: number }): number {
  const [, seq] = store.gather(nextSeqQueries(topicId, now));
  return Number(seq![0]!.next_seq);
}

/** Record the next seq to allocate after an insert. */
export function setNextSeq(
  store: Store,
  { topicId, next, now }: { topicId: string; next: number; now: number },
): void {
  store.stmt("UPDATE topic_seq SET next_seq = ?, updated_at = ? WHERE topic_id = ?", TOPIC_ROWS)
    .run(
      next,
      now,
      topicId,
    );
}

/**
 * The highest seq ever allocated in a topic (0 when none). Counts deleted
 * messages, as `ack_through` and `cursor_reset` bounds must.
 */
export function latestSeq(store: Store, topicId: string): number {
  const row = store.stmt(LATEST_SEQ_SQL).get<{ latest: number }>(topicId)!;
  return row.latest;
}

/** The statement of {@linkcode latestSeq} (one parameter: the topic), for `Store.gather`. */
export const LATEST_SEQ_SQL =
  `SELECT MAX(COALESCE((SELECT next_seq - 1 FROM topic_seq WHERE topic_id = ?1), 0),
              COALESCE((SELECT MAX(seq) FROM messages WHERE topic_id = ?1), 0)) AS latest`;

/**
 * Insert messages. On SQLite their full-text index rows follow later (the
 * insert trigger queues them, see `search.ts`). On PostgreSQL the index
 * rows go in with them, first: each names its topic and has an id of its
 * own, so it is written under the topic's lock alone, before the send
 * takes the commit lock (`postgres/locks.ts`) for the messages, which are
 * positioned at `MAX(rowid) + 1`, computed inside the insert, without a
 * round trip of its own; under the commit lock nobody else can take it.
 * The lock is then held for the message rows, not for their indexing.
 */
export function insertMessages(store: Store, rows: readonly NewMessageRow[]): void {
  const postgres = indexesWithTheSend(store);
  if (postgres) {
    const indexRow = store.stmt(
      `INSERT INTO bus_fts (content_markdown, terms, message_id, topic_id) VALUES (?, ?, ?, ?)`,
      TOPIC_ROWS,
    );
    for (const row of rows) {
      indexRow.run(row.content_markdown, row.terms, row.message_id, row.topic_id);
    }
  }
  const message = store.stmt(
    `INSERT INTO messages (${postgres ? "rowid, " : ""}message_id, topic_id, seq, sender,
       message_type, reply_to, content_markdown, metadata_json, client_message_id, created_at)
     VALUES (${
      postgres ? "(SELECT COALESCE(MAX(rowid), 0) + 1 FROM messages), " : ""
    }?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const row of rows) {
    message.run(
      row.message_id,
      row.topic_id,
      row.seq,
      row.sender,
      row.message_type,
      row.reply_to,
      row.content_markdown,
      row.metadata_json,
      row.client_message_id,
      row.created_at,
    );
  }
}

/** Which of `messageIds` exist in any topic (one query for a whole outbox). */
export function takenMessageIds(store: Store, messageIds: readonly string[]): Set<string> {
  const rows = store.stmt(
    "SELECT message_id FROM messages WHERE message_id IN (SELECT value FROM json_each(?))",
  ).all(JSON.stringify(messageIds));
  return new Set(rows.map((row) => String(row.message_id)));
}

/** The topic of each of `messageIds` that exists (one query for a page of ids). */
export function messageTopics(
  store: Store,
  messageIds: readonly string[],
): Map<string, string> {
  const rows = store.stmt(
    `SELECT message_id, topic_id FROM messages
     WHERE message_id IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify(messageIds));
  return new Map(rows.map((row) => [String(row.message_id), String(row.topic_id)]));
}

/** True when a message with this id exists in this topic. */
export function messageInTopic(
  store: Store,
  { topicId, messageId }: { topicId: string; messageId: string },
): boolean {
  return store.stmt("SELECT 1 FROM messages WHERE message_id = ? AND topic_id = ?").get(
    messageId,
    topicId,
  ) !== undefined;
}

/** Query of {@linkcode messagesAfter}. */
export interface AfterQuery {
  topicId: string;
  afterSeq: number;
  /** Leave out this sender's messages (the caller's own), or null for everyone's. */
  excludeSender: string | null;
  limit: number;
}

/** Messages with seq > `afterSeq`, oldest first. */
export function messagesAfter(store: Store, query: AfterQuery): MessageRow[] {
  const { sql, params } = messagesAfterQuery(query);
  return store.stmt(sql).all<MessageRow>(...params);
}

/** The statement of {@linkcode messagesAfter}, to travel with others ({@linkcode Store.gather}). */
export function messagesAfterQuery(query: AfterQuery): Query {
  return query.excludeSender === null
    ? {
      sql: "SELECT * FROM messages WHERE topic_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      params: [query.topicId, query.afterSeq, query.limit],
    }
    : {
      sql:
        "SELECT * FROM messages WHERE topic_id = ? AND seq > ? AND sender <> ? ORDER BY seq LIMIT ?",
      params: [query.topicId, query.afterSeq, query.excludeSender, query.limit],
    };
}

/** How many messages {@linkcode messagesAfter} would return, counting at most `limit`. */
export function countMessagesAfter(store: Store, query: AfterQuery & { excludeSender: string }) {
  return store.stmt(
    `SELECT COUNT(*) AS n FROM (SELECT 1 FROM messages
       WHERE topic_id = ? AND seq > ? AND sender <> ? LIMIT ?) AS unread`,
  ).get<{ n: number }>(query.topicId, query.afterSeq, query.excludeSender, query.limit)!.n;
}

/** True when {@linkcode messagesAfter} would return at least one row. */
export function hasMessagesAfter(store: Store, query: Omit<AfterQuery, "limit">): boolean {
  if (query.excludeSender === null) {
    return store.stmt("SELECT 1 FROM messages WHERE topic_id = ? AND seq > ? LIMIT 1").get(
      query.topicId,
      query.afterSeq,
    ) !== undefined;
  }
  return store.stmt(
    "SELECT 1 FROM messages WHERE topic_id = ? AND seq > ? AND sender <> ? LIMIT 1",
  ).get(query.topicId, query.afterSeq, query.excludeSender) !== undefined;
}

/** The last `limit` messages of a topic, oldest first. */
export function lastMessages(
  store: Store,
  { topicId, limit }: { topicId: string; limit: number },
): MessageRow[] {
  return store.stmt(
    `SELECT * FROM (SELECT * FROM messages WHERE topic_id = ? ORDER BY seq DESC LIMIT ?)
     AS recent ORDER BY seq`,
  ).all<MessageRow>(topicId, limit);
}

/** Messages with seq < `beforeSeq`, the newest `limit` of them, oldest first. */
export function messagesBefore(
  store: Store,
  { topicId, beforeSeq, limit }: { topicId: string; beforeSeq: number; limit: number },
): MessageRow[] {
  return store.stmt(
    `SELECT * FROM (SELECT * FROM messages WHERE topic_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?)
     AS recent ORDER BY seq`,
  ).all<MessageRow>(topicId, beforeSeq, limit);
}

/** A message with its position in the database's global order (its rowid). */
export type OrderedMessageRow = MessageRow & { event_id: number };

/** Messages of every topic stored after position `afterId`, in order. */
export function messagesSince(
  store: Store,
  { afterId, limit }: { afterId: number; limit: number },
): OrderedMessageRow[] {
  return store.stmt(
    "SELECT rowid AS event_id, * FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?",
  ).all<OrderedMessageRow>(afterId, limit);
}

/** The position of the last stored message (0 when none). */
export function lastMessagePosition(store: Store): number {
  return store.stmt("SELECT COALESCE(MAX(rowid), 0) AS id FROM messages").get<{ id: number }>()!.id;
}
