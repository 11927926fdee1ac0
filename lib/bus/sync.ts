/**
 * `sync`: send, acknowledge and receive in one call (seed section 4.3).
 *
 * Each round is one `BEGIN IMMEDIATE` transaction: the outbox is inserted
 * with consecutive seqs (an item whose `client_message_id` was already used
 * by this sender returns the stored message, flagged `duplicate`, and takes
 * no seq), `ack_through` moves the cursor forward, unread messages are read,
 * the cursor auto-advances, and presence is touched. Any error rolls the
 * whole round back.
 *
 * When nothing is unread and `wait_seconds > 0`, the call waits on the
 * process's {@linkcode ChangeFeed}: no writes while waiting, a wake-up within
 * milliseconds of a commit by any process, and an immediate stop when the
 * client cancels. A send of this process to the topic may run the waiting
 * call's round in its own transaction (see the feed's `deliver`): the round
 * is the one a wake-up would have run next.
 *
 * @module
 */

import { BusError, invalidArgument, type Warning } from "../errors.ts";
import { countWithinBudget } from "../budget.ts";
import {
  clearWaiting,
  type CursorRow,
  getCursor,
  markWaiting,
  setCursor,
} from "../store/cursors.ts";
import {
  type AfterQuery,
  hasMessagesAfter,
  LATEST_SEQ_SQL,
  latestSeq,
  type MessageRow,
  messagesAfter,
  messagesAfterQuery,
  type NewMessageRow,
} from "../store/messages.ts";
import { readSendContext, type SendContext } from "../store/send.ts";
import type { Store } from "../store/mod.ts";
import { termsForSend } from "../store/search.ts";
import type { TopicRow } from "../store/topics.ts";
import { appendMessages, MAX_MESSAGE_ID_CHARS, unusedMessageIds } from "./append.ts";
import { screenOptional, screenSecrets } from "./secrets.ts";
import { newId } from "./ids.ts";
import { type Message, toMessage } from "./messages.ts";
import type { ChangeMark } from "./changes.ts";
import { type Bus, write } from "./mod.ts";
import { MAX_AGENT_NAME_CHARS } from "./names.ts";
import type { Identity } from "./session.ts";
import { requireTopic } from "./topics.ts";
import { cleanName, metadataJson } from "./validate.ts";
import { capWaitSeconds, startProgress, type WaitOptions } from "./waiting.ts";

/** Longest `message_type`. */
export const MAX_MESSAGE_TYPE_CHARS = 32;
/** Longest `client_message_id`. */
export const MAX_CLIENT_MESSAGE_ID_CHARS = 128;

/** One outbox item, as the tool's schema has already typed it. */
export interface OutgoingMessage {
  content_markdown: string;
  message_type?: string | undefined;
  reply_to?: string | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  client_message_id?: string | null | undefined;
}

/** Arguments of {@linkcode sync}. */
export interface SyncArgs {
  topicId: string;
  outbox: OutgoingMessage[];
  maxItems: number;
  includeSelf: boolean;
  waitSeconds: number;
  autoAdvance: boolean;
  ackThrough?: number | undefined;
}

/** Hooks of a waiting `sync`. */
export type SyncOptions = WaitOptions;

/** `sync`'s structured output. */
export interface SyncResult {
  topic_id: string;
  agent_name: string;
  status: "ready" | "timeout" | "empty";
  cursor: { last_seq: number; updated_at: number };
  sent: { message: Message; duplicate: boolean }[];
  received: Message[];
  received_count: number;
  has_more: boolean;
  warnings: Warning[];
}

interface Round {
  cursor: CursorRow;
  sent: { message: Message; duplicate: boolean }[];
  received: Message[];
  hasMore: boolean;
  /** Where the next read may start (see {@linkcode ownTail}), once the round has committed. */
  readHint: Identity["readHint"];
}

interface PreparedItem {
  contentMarkdown: string;
  /** Index terms of the body, computed before the write lock is taken (see `termsForSend`). */
  terms: string;
  messageType: string;
  replyTo: string | null;
  metadataJson: string | null;
  clientMessageId: string | null;
}

/**
 * Run one `sync` for `identity`.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `TOPIC_CLOSED`, `INVALID_ARGUMENT`, `DB_BUSY`
 */
export async function sync(
  bus: Bus,
  identity: Identity,
  args: SyncArgs,
  options: SyncOptions = {},
): Promise<SyncResult> {
  const warnings: Warning[] = [];
  checkSyncArgs(bus, args);
  const waitSeconds = capWaitSeconds(bus, args.waitSeconds, warnings);
  const items = prepareOutbox(bus, args.outbox);

  const deadline = performance.now() + waitSeconds * 1000;
  // (Taken before the first round, so a commit during it still wakes the wait; a sync that
  // will not wait needs none, and skips the look at the database it costs.)
  const mark = waitSeconds > 0 ? bus.changes.mark() : undefined;
  // A wait about to start is recorded in the same transaction (the console's
  // "waiting" presence), and cleared by the one that ends it: no extra commits.
  const markIfWaiting = (round: Round) => {
    if (round.received.length === 0 && waitSeconds > 0) {
      markWaiting(bus.store, {
        topicId: args.topicId,
        agentName: identity.agentName,
        until: bus.now() + waitSeconds,
      });
    }
  };
  // Sending or acknowledging needs the write lock; a sync that only reads never waits for it.
  const first = items.length === 0 && args.ackThrough === undefined
    ? await quietRound(bus, identity, args, markIfWaiting)
    : settle(
      identity,
      await write(bus, () => {
        const round = syncRound(bus, identity, args, items);
        markIfWaiting(round);
        return round;
      }, { topics: [args.topicId] }),
    );
  const round = first.received.length === 0 && mark !== undefined
    ? await waitForUnread(bus, identity, args, {
      after: first,
      wait: { seconds: waitSeconds, deadline, mark },
      options,
    })
    : first;
  const status = round.received.length > 0 ? "ready" : waitSeconds > 0 ? "timeout" : "empty";
  return {
    topic_id: args.topicId,
    agent_name: identity.agentName,
    status,
    cursor: { last_seq: round.cursor.last_seq, updated_at: round.cursor.updated_at },
    sent: first.sent,
    received: round.received,
    received_count: round.received.length,
    has_more: round.hasMore,
    warnings,
  };
}

/** @throws {BusError} `INVALID_ARGUMENT` for arguments the schema cannot rule out */
function checkSyncArgs(bus: Bus, args: SyncArgs): void {
  if (args.maxItems < 1 || args.maxItems > bus.config.maxSyncItems) {
    throw invalidArgument(`max_items must be between 1 and ${bus.config.maxSyncItems}`);
  }
  if (args.ackThrough !== undefined) {
    if (args.autoAdvance) throw invalidArgument("ack_through requires auto_advance=false");
    if (args.ackThrough < 0) throw invalidArgument("ack_through must be an int >= 0");
  }
}

/**
 * Wait (until `wait.deadline`, for commits since `wait.mark`) for a message after the round `after` left the
 * cursor at, woken by commits to the topic, then read it in a round that
 * neither sends nor acknowledges again. The waiting mark the first round
 * set is cleared by the round that ends the wait, or here when the wait is
 * cancelled or fails.
 */
async function waitForUnread(
  bus: Bus,
  identity: Identity,
  args: SyncArgs,
  { after, wait, options }: {
    after: Round;
    wait: { seconds: number; deadline: number; mark: ChangeMark };
    options: SyncOptions;
  },
): Promise<Round> {
  bus.log.debug("sync waiting", { topic_id: args.topicId, agent_name: identity.agentName });
  const progress = startProgress(bus, options, wait.seconds);
  const { deadline } = wait;
  let { mark } = wait;
  let round = after;
  let waiting = true;
  try {
    for (;;) {
      const remaining = deadline - performance.now();
      const outcome = remaining > 0
        ? await bus.changes.wait(mark, {
          timeoutMs: remaining,
          signal: options.signal,
          topics: [args.topicId],
          deliver: () => deliveredRound(bus, identity, args, round.cursor.last_seq),
        })
        : "timeout";
      if (typeof outcome === "object") {
        // Read in the transaction of the write that woke it (see ChangeFeed's `deliver`).
        waiting = false;
        bus.changes.notify([args.topicId]);
        return settle(identity, outcome.delivered as Round);
      }
      mark = bus.changes.mark();
      const unread = outcome === "timeout" || bus.store.read(() =>
        hasMessagesAfter(bus.store, {
          topicId: args.topicId,
          afterSeq: readStart(identity, round.cursor.last_seq, args.includeSelf),
          excludeSender: args.includeSelf ? null : identity.agentName,
        })
      );
      if (!unread) continue;
      // Read (and on timeout, touch presence) without resending or re-acking.
      round = await quietRound(bus, identity, { ...args, ackThrough: undefined }, (next) => {
        if (next.received.length > 0 || outcome === "timeout") {
          clearWaiting(bus.store, { topicId: args.topicId, agentName: identity.agentName });
        }
      });
      waiting = round.received.length === 0 && outcome !== "timeout";
      if (!waiting) return round;
    }
  } finally {
    clearInterval(progress);
    // Cancelled or failed: take the mark back (best effort; it expires anyway).
    if (waiting) {
      await write(
        bus,
        () => clearWaiting(bus.store, { topicId: args.topicId, agentName: identity.agentName }),
        { topics: [args.topicId] },
      )
        .catch(() => {});
    }
  }
}

/**
 * A waiting `sync`'s round, run in the transaction of a write to its topic:
 * what it would read once woken, or undefined when nothing is unread for it
 * (it waits on).
 */
function deliveredRound(
  bus: Bus,
  identity: Identity,
  args: SyncArgs,
  lastSeq: number,
): Round | undefined {
  const unread = hasMessagesAfter(bus.store, {
    topicId: args.topicId,
    afterSeq: readStart(identity, lastSeq, args.includeSelf),
    excludeSender: args.includeSelf ? null : identity.agentName,
  });
  if (!unread) return undefined;
  const round = syncRound(bus, identity, { ...args, ackThrough: undefined }, []);
  if (round.received.length === 0) return undefined;
  clearWaiting(bus.store, { topicId: args.topicId, agentName: identity.agentName });
  return round;
}

/**
 * Post messages as `sender` without joining the topic: a person at the
 * operator's command line. Agents receive them through `sync` like any
 * other message; `client_message_id` makes retries safe here too.
 *
 * @throws {BusError} `TOPIC_NOT_FOUND`, `TOPIC_CLOSED`, `INVALID_ARGUMENT`, `DB_BUSY`
 */
export async function postAs(
  bus: Bus,
  args: { topicId: string; sender: string; outbox: OutgoingMessage[] },
): Promise<{ message: Message; duplicate: boolean }[]> {
  const sender = cleanName(args.sender, "sender", MAX_AGENT_NAME_CHARS);
  const items = prepareOutbox(bus, args.outbox);
  return await write(bus, () => {
    const now = bus.now();
    const ids = items.map(newId);
    const context = readSendContext(bus.store, {
      topicId: args.topicId,
      now,
      outbox: outboxQuestion(sender, items, ids),
    });
    const topic = foundTopic(context.topic, args.topicId);
    ensureOpen(topic);
    const plan = planOutbox(bus.store, sender, topic.topic_id, items, now, {
      ...context.outbox!,
      ids,
    });
    appendMessages(bus.store, { topicId: topic.topic_id, rows: plan.rows, now });
    return plan.sent;
  }, { topics: [args.topicId] });
}

function ensureOpen(topic: TopicRow): void {
  if (topic.status === "closed") {
    throw new BusError(
      "TOPIC_CLOSED",
      `Topic "${topic.topic_id}" is closed; nothing was sent. Open a new topic to keep talking`,
      { context: { topic_id: topic.topic_id } },
    );
  }
}

function syncRound(bus: Bus, identity: Identity, args: SyncArgs, items: PreparedItem[]): Round {
  const store = bus.store;
  const now = bus.now();
  const ids = items.map(newId);
  // What follows the cursor this session last saw travels with the other reads; it is kept
  // when the stored cursor proves to be that one (a round trip fewer on PostgreSQL).
  const guess = identity.lastCursor === undefined ? undefined : unreadQuery(
    identity,
    args,
    Math.max(identity.lastCursor, identity.pendingCursor ?? 0, args.ackThrough ?? 0),
  );
  const context = readSendContext(store, {
    topicId: args.topicId,
    agentName: identity.agentName,
    now,
    ...(items.length > 0 ? { outbox: outboxQuestion(identity.agentName, items, ids) } : {}),
    also: [
      ...(guess ? [messagesAfterQuery(guess)] : []),
      // Without an outbox, the topic's latest seq (with one, it is its next seq's predecessor).
      ...(items.length === 0 ? [{ sql: LATEST_SEQ_SQL, params: [args.topicId] }] : []),
    ],
  });
  const [guessed, latestRows] = guess ? context.also : [undefined, ...context.also];
  const prefetched = guess && {
    afterSeq: guess.afterSeq,
    rows: guessed as unknown as MessageRow[],
  };
  const topic = foundTopic(context.topic, args.topicId);
  if (items.length > 0) ensureOpen(topic);
  const topicId = topic.topic_id;
  let cursor = context.cursor!;
  // A read this session could not record (the write lock was held elsewhere) is recorded now.
  // (The session forgets it only once this write has committed: a write run again, or one that
  // fails and is read instead, still starts after it. See settle.)
  const pending = identity.pendingCursor;
  if (pending !== undefined) {
    cursor = advanceCursor(store, identity, cursor, { topicId, to: pending, now });
  }
  const outbox = context.outbox;
  const plan = outbox
    ? planOutbox(store, identity.agentName, topic.topic_id, items, now, { ...outbox, ids })
    : undefined;
  // Under the topic's lock, the topic's latest seq (after the send) is known without asking.
  const latest = plan ? plan.nextSeq - 1 : Number(latestRows![0]!.latest);

  if (args.ackThrough !== undefined) {
    if (args.ackThrough > latest) {
      throw invalidArgument(`ack_through exceeds latest message seq (${latest})`);
    }
    cursor = advanceCursor(store, identity, cursor, { topicId, to: args.ackThrough, now });
  }

  // Read before the outbox is stored (its own messages need no reading): on PostgreSQL the
  // inserts then go out with COMMIT, and the commit lock they take spans no round trip. The
  // cursor, a row of the topic, goes before them: the lock is held for as little as can be.
  const read = unreadBatch(bus, identity, args, cursor.last_seq, plan?.rows, prefetched);
  if (args.autoAdvance && read.last !== undefined) {
    cursor = advanceCursor(store, identity, cursor, {
      topicId,
      to: read.last,
      now,
      forward: false,
    });
  }
  if (plan) appendMessages(store, { topicId: topic.topic_id, rows: plan.rows, now });
  identity.lastCursor = cursor.last_seq;
  return {
    cursor,
    sent: plan?.sent ?? [],
    received: read.received,
    hasMore: read.hasMore,
    readHint: ownTail(bus, args, cursor.last_seq, read, latest),
  };
}

/**
 * Move `identity`'s cursor in its topic to `to` (only forward, unless
 * `forward` is false: what was just read is stored as it is) and return it.
 */
function advanceCursor(
  store: Store,
  identity: Identity,
  cursor: CursorRow,
  { topicId, to, now, forward = true }: {
    topicId: string;
    to: number;
    now: number;
    forward?: boolean;
  },
): CursorRow {
  if (forward && to <= cursor.last_seq) return cursor;
  setCursor(store, { topicId, agentName: identity.agentName, lastSeq: to, now });
  return { ...cursor, last_seq: to };
}

/** What {@linkcode readSendContext} asks about an outbox. */
function outboxQuestion(sender: string, items: PreparedItem[], ids: string[]) {
  return {
    sender,
    ids,
    clientMessageIds: items.flatMap((item) => item.clientMessageId ?? []),
    replyTos: items.flatMap((item) => item.replyTo ?? []),
  };
}

/** The topic read, or `TOPIC_NOT_FOUND`. */
function foundTopic(topic: TopicRow | undefined, topicId: string): TopicRow {
  if (!topic) {
    throw new BusError("TOPIC_NOT_FOUND", `Topic "${topicId}" not found`, {
      context: { topic_id: topicId },
    });
  }
  return topic;
}

/**
 * After a round: the session's pending cursor, recorded by it, is forgotten
 * (unless a read since moved it further), and the read hint it found is
 * kept. Called once the round's write has committed: a transaction's
 * function may run more than once, or run and not commit, so it leaves the
 * session as it found it (a hint from a send that was not stored would
 * skip the messages that took its seqs).
 */
function settle(identity: Identity, round: Round): Round {
  if (identity.pendingCursor !== undefined && identity.pendingCursor <= round.cursor.last_seq) {
    identity.pendingCursor = undefined;
  }
  if (round.readHint) identity.readHint = round.readHint;
  return round;
}

/**
 * A round of a sync that sends and acknowledges nothing, when the write lock
 * is held elsewhere: the same messages from the snapshot, written nowhere.
 * The cursor's move is kept in the session (`pendingCursor`) and recorded by
 * its next write, so the next sync neither repeats nor skips a message.
 * Call inside a read.
 */
function readRound(bus: Bus, identity: Identity, args: SyncArgs): Round {
  const store = bus.store;
  const topic = requireTopic(store, args.topicId);
  const stored = getCursor(store, { topicId: topic.topic_id, agentName: identity.agentName });
  const from = Math.max(stored?.last_seq ?? 0, identity.pendingCursor ?? 0);
  const read = unreadBatch(bus, identity, args, from);
  const through = args.autoAdvance && read.last !== undefined ? read.last : from;
  if (through > (stored?.last_seq ?? 0)) identity.pendingCursor = through;
  // (A read commits nothing: what it found holds at once.)
  identity.readHint = ownTail(bus, args, through, read, undefined) ?? identity.readHint;
  identity.lastCursor = through;
  const cursor: CursorRow = stored ? { ...stored, last_seq: through } : {
    topic_id: topic.topic_id,
    agent_name: identity.agentName,
    last_seq: through,
    updated_at: bus.now(),
  };
  return { cursor, sent: [], received: read.received, hasMore: read.hasMore, readHint: undefined };
}

/** What a round reads after `cursor`: one more than `max_items`, to know if there is more. */
function unreadQuery(identity: Identity, args: SyncArgs, cursor: number): AfterQuery {
  return {
    topicId: args.topicId,
    afterSeq: readStart(identity, cursor, args.includeSelf),
    excludeSender: args.includeSelf ? null : identity.agentName,
    limit: args.maxItems + 1,
  };
}

/**
 * The messages a round delivers after `cursor`: as many as `max_items` and
 * the budget allow. `sending` are the round's own new messages, not stored
 * yet: they follow what is read, when the peer reads its own. `prefetched`
 * is a read made earlier in the transaction, used when it started at the
 * same place.
 */
function unreadBatch(
  bus: Bus,
  identity: Identity,
  args: SyncArgs,
  cursor: number,
  sending: readonly MessageRow[] = [],
  prefetched?: { afterSeq: number; rows: MessageRow[] },
): { received: Message[]; hasMore: boolean; last: number | undefined } {
  const query = unreadQuery(identity, args, cursor);
  const limit = query.limit;
  const stored = prefetched?.afterSeq === query.afterSeq
    ? prefetched.rows
    : messagesAfter(bus.store, query);
  const rows = args.includeSelf && stored.length < limit
    ? [...stored, ...sending].slice(0, limit)
    : stored;
  const within = rows.slice(0, args.maxItems);
  const batch = within.slice(
    0,
    countWithinBudget(within, messageTexts, bus.config.toolResultMaxBytes),
  );
  return {
    received: batch.map(toMessage),
    hasMore: rows.length > batch.length,
    last: batch.at(-1)?.seq,
  };
}

/**
 * When everything after the cursor is this peer's own, the next read can
 * start past it: that hint, else undefined. `latest` is the topic's latest
 * seq when the round already knows it.
 */
function ownTail(
  bus: Bus,
  args: SyncArgs,
  cursor: number,
  read: { hasMore: boolean; last: number | undefined },
  latest: number | undefined,
): Identity["readHint"] {
  if (args.includeSelf || read.hasMore || (!args.autoAdvance && read.last !== undefined)) {
    return undefined;
  }
  return { cursor, ownThrough: latest ?? latestSeq(bus.store, args.topicId) };
}

/** How long a sync that sends nothing waits for the write lock before it reads instead. */
const READ_ONLY_AFTER_MS = 25;

/**
 * One round of a sync that sends and acknowledges nothing: recorded as usual
 * (cursor, presence, and `also`) when the write lock comes within
 * {@linkcode READ_ONLY_AFTER_MS}, else read from the snapshot (see
 * {@linkcode readRound}): a reader never waits for another process's writer.
 */
async function quietRound(
  bus: Bus,
  identity: Identity,
  args: SyncArgs,
  also: (round: Round) => void,
): Promise<Round> {
  try {
    const round = await bus.store.immediate(() => {
      const round = syncRound(bus, identity, args, []);
      also(round);
      return round;
    }, { waitMs: READ_ONLY_AFTER_MS, topics: [args.topicId] });
    bus.changes.notify([args.topicId]);
    return settle(identity, round);
  } catch (error) {
    if (!(error instanceof BusError && error.code === "DB_BUSY")) throw error;
    return bus.store.read(() => readRound(bus, identity, args));
  }
}

/** An outbox decided: the rows to store and what each item became. */
interface OutboxPlan {
  rows: NewMessageRow[];
  sent: { message: Message; duplicate: boolean }[];
  /** The topic's next seq once the rows are stored. */
  nextSeq: number;
}

/**
 * Decide an outbox with what {@linkcode readSendContext} found: the next
 * seq, the drawn `ids` (drawn again if one is taken), the messages already
 * stored under its `client_message_id`s and the `reply_to` targets that
 * exist. Writes nothing ({@linkcode appendMessages} does).
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a `reply_to` that is not in the topic
 */
function planOutbox(
  store: Store,
  sender: string,
  topicId: string,
  items: PreparedItem[],
  now: number,
  known: NonNullable<SendContext["outbox"]> & { ids: string[] },
): OutboxPlan {
  const rows: NewMessageRow[] = [];
  const sent: { message: Message; duplicate: boolean }[] = [];
  let seq = known.nextSeq;
  const ids = known.takenIds.size === 0 && new Set(known.ids).size === known.ids.length
    ? known.ids
    : unusedMessageIds(store, items.length);
  for (const [index, item] of items.entries()) {
    if (item.clientMessageId !== null) {
      const existing = known.stored.get(item.clientMessageId);
      if (existing) {
        sent.push({ message: toMessage(existing), duplicate: true });
        continue;
      }
    }
    if (item.replyTo !== null && !known.repliesFound.has(item.replyTo)) {
      throw invalidArgument(
        `outbox[${index}].reply_to "${item.replyTo}" is not a message in topic "${topicId}"`,
      );
    }
    const row: NewMessageRow = {
      message_id: ids[index]!,
      topic_id: topicId,
      seq,
      sender,
      message_type: item.messageType,
      reply_to: item.replyTo,
      content_markdown: item.contentMarkdown,
      metadata_json: item.metadataJson,
      client_message_id: item.clientMessageId,
      created_at: now,
      terms: item.terms,
    };
    rows.push(row);
    // A second item with the same client_message_id in this outbox is its duplicate.
    if (item.clientMessageId !== null) known.stored.set(item.clientMessageId, row);
    sent.push({ message: toMessage(row), duplicate: false });
    seq++;
  }
  return { rows, sent, nextSeq: seq };
}

/** The seq after which a read starts: the cursor, or past a known run of own messages. */
function readStart(identity: Identity, cursor: number, includeSelf: boolean): number {
  const hint = identity.readHint;
  return !includeSelf && hint?.cursor === cursor ? Math.max(cursor, hint.ownThrough) : cursor;
}

/** The text fields a message adds to a result (see `budget.ts`). */
function messageTexts(row: MessageRow): (string | null)[] {
  return [row.sender, row.content_markdown, row.metadata_json];
}

function prepareOutbox(bus: Bus, outbox: OutgoingMessage[]): PreparedItem[] {
  const { maxOutbox, maxMessageChars, maxMetadataChars, secrets: mode } = bus.config;
  if (outbox.length > maxOutbox) {
    throw invalidArgument(`outbox has ${outbox.length} items; the most is ${maxOutbox}`);
  }
  return outbox.map((item, index) => {
    const at = `outbox[${index}]`;
    if (!item.content_markdown.trim()) {
      throw invalidArgument(`${at}.content_markdown must be a non-empty string`);
    }
    if (item.content_markdown.length > maxMessageChars) {
      throw invalidArgument(`${at}.content_markdown exceeds max length (${maxMessageChars})`);
    }
    const content = screenSecrets(item.content_markdown, {
      mode,
      field: `${at}.content_markdown`,
    });
    const replyTo = item.reply_to === null || item.reply_to === undefined
      ? null
      : cleanName(item.reply_to, `${at}.reply_to`, MAX_MESSAGE_ID_CHARS);
    const clientMessageId = item.client_message_id === null || item.client_message_id === undefined
      ? null
      : cleanName(item.client_message_id, `${at}.client_message_id`, MAX_CLIENT_MESSAGE_ID_CHARS);
    return {
      contentMarkdown: content,
      terms: termsForSend(bus.store, content),
      messageType: cleanName(
        item.message_type ?? "message",
        `${at}.message_type`,
        MAX_MESSAGE_TYPE_CHARS,
      ),
      replyTo,
      metadataJson: screenOptional(
        metadataJson(item.metadata, `${at}.metadata`, maxMetadataChars),
        { mode, field: `${at}.metadata` },
      ),
      clientMessageId,
    };
  });
}
