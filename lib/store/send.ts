/**
 * What a `sync` round needs to know before it sends, read at once: the
 * topic, the peer's cursor (created and touched), and for an outbox the next
 * seq, whether the drawn message ids are free, the messages already stored
 * under its `client_message_id`s and which `reply_to` targets exist in the
 * topic. The statements do not depend on each other's answers, so on
 * PostgreSQL they travel in one round trip, with the transaction's `BEGIN`
 * and its lock (see {@linkcode Store.gather}).
 *
 * @module
 */

import { type CursorRow, GET_CURSOR_SQL, TOUCH_CURSOR_SQL } from "./cursors.ts";
import { type MessageRow, nextSeqQueries } from "./messages.ts";
import { type Query, type Store, TOPIC_ROWS } from "./types.ts";
import { GET_TOPIC_SQL, type TopicRow } from "./topics.ts";

/** What {@linkcode readSendContext} is asked about. */
export interface SendQuestion {
  topicId: string;
  /** The peer whose cursor is touched and returned (none for the operator's `post`). */
  agentName?: string;
  now: number;
  /** Present when messages are about to be sent. */
  outbox?: {
    sender: string;
    /** Message ids drawn for the outbox, to check that none is taken. */
    ids: readonly string[];
    clientMessageIds: readonly string[];
    replyTos: readonly string[];
  };
  /** More reads that travel with these (a dialect's own rows); their rows come back in `also`. */
  also?: readonly Query[];
}

/** The answers of {@linkcode readSendContext}. */
export interface SendContext {
  topic: TopicRow | undefined;
  /** The peer's cursor (when an agent was named and the topic exists). */
  cursor: CursorRow | undefined;
  /** For an outbox: the next seq, taken ids, stored messages by `client_message_id`, replies found. */
  outbox?: {
    nextSeq: number;
    takenIds: Set<string>;
    stored: Map<string, MessageRow>;
    repliesFound: Set<string>;
  };
  /** The rows of each of the question's `also` queries, in order. */
  also: Record<string, unknown>[][];
}

/**
 * A condition that a column is one of `values`: `= ?` for one (the usual
 * send: a lookup by key without reading a JSON list, 3.3 against 6.0 µs a
 * statement on SQLite), else membership of a JSON list.
 */
function oneOf(values: readonly string[]): { sql: string; param: string } {
  return values.length === 1
    ? { sql: "= ?", param: values[0]! }
    : { sql: "IN (SELECT value FROM json_each(?))", param: JSON.stringify(values) };
}

/** Read everything a send needs, in one go (one round trip on PostgreSQL). */
export function readSendContext(store: Store, question: SendQuestion): SendContext {
  const { topicId, agentName, now, outbox } = question;
  const queries: Query[] = [{ sql: GET_TOPIC_SQL, params: [topicId] }];
  if (agentName !== undefined) {
    queries.push(
      { sql: TOUCH_CURSOR_SQL, params: [topicId, agentName, now], scope: TOPIC_ROWS },
      { sql: GET_CURSOR_SQL, params: [topicId, agentName] },
    );
  }
  if (outbox) {
    // One lookup by primary key serves both the drawn ids and the reply targets (a condition on
    // the topic here would let SQLite's planner scan the topic's messages instead).
    const ids = oneOf([...outbox.ids, ...outbox.replyTos]);
    queries.push(...nextSeqQueries(topicId, now), {
      sql: `SELECT message_id, topic_id FROM messages WHERE message_id ${ids.sql}`,
      params: [ids.param],
    });
    if (outbox.clientMessageIds.length > 0) {
      const clientIds = oneOf(outbox.clientMessageIds);
      queries.push({
        sql: `SELECT * FROM messages WHERE topic_id = ? AND sender = ?
                AND client_message_id ${clientIds.sql}`,
        params: [topicId, outbox.sender, clientIds.param],
      });
    }
  }
  const also = question.also ?? [];
  const answers = store.gather([...also, ...queries]);
  const alsoRows = answers.splice(0, also.length);
  const topic = answers.shift()![0] as TopicRow | undefined;
  let cursor: CursorRow | undefined;
  if (agentName !== undefined) {
    answers.shift();
    cursor = answers.shift()![0] as CursorRow | undefined;
  }
  if (!outbox) return { topic, cursor, also: alsoRows };
  const [, seq, found, stored] = answers;
  const ids = new Set(outbox.ids);
  const replies = new Set(outbox.replyTos);
  const takenIds = new Set<string>();
  const repliesFound = new Set<string>();
  for (const row of found!) {
    const id = String(row.message_id);
    if (ids.has(id)) takenIds.add(id);
    if (replies.has(id) && row.topic_id === topicId) repliesFound.add(id);
  }
  return {
    topic,
    cursor,
    outbox: {
      nextSeq: Number(seq![0]!.next_seq),
      takenIds,
      stored: new Map(
        ((stored ?? []) as unknown as MessageRow[]).map((row) => [row.client_message_id!, row]),
      ),
      repliesFound,
    },
    also: alsoRows,
  };
}
