/**
 * `msg_post` with the strict sync protocol (research 2.9), in the order
 * AgentChatBus checks: the thread exists and is open; priority, stop_reason
 * and reply_to are valid; both sync fields are present
 * (`MissingSyncFieldsError`); the token exists and belongs to this thread,
 * and to this author when either is an agent (`ReplyTokenInvalidError`);
 * it is unused (`ReplyTokenReplayError`); nothing arrived after
 * `expected_last_seq` (`SeqMismatchError`, with what arrived). Only then is
 * the token consumed and the message stored, in the same transaction.
 *
 * After a sync error by a registered agent that proved who it is (its
 * session is bound to it, or it presented one of its own tokens), its tokens
 * in the thread are retired and a refresh request recorded (committed,
 * though the post is refused), so its next `msg_wait` returns at once with a
 * fresh token. A refusal never touches another agent's state: naming an
 * agent in `author` with a made-up token changes nothing. Unlike AgentChatBus, a registered agent cannot post with an
 * unbound token: that would let anyone post under its name.
 *
 * @module
 */

import { countWithinBudget } from "../../budget.ts";
import { BusError, invalidArgument } from "../../errors.ts";
import {
  type AgentRow,
  chatMessagesAfter,
  clearTyping,
  consumeReplyToken,
  dropRefreshRequest,
  exitChatWait,
  GET_AGENT_SQL,
  GET_REPLY_TOKEN_SQL,
  insertAttachment,
  insertChatExtras,
  invalidateReplyTokens,
  recordLostRace,
  type ReplyTokenRow,
  setRefreshRequest,
  toTurnState,
  touchAgent,
  type TurnState,
  turnStateQuery,
} from "../../store/chat/mod.ts";
import { termsForSend } from "../../store/search.ts";
import { readSendContext } from "../../store/send.ts";
import type { TopicRow } from "../../store/topics.ts";
import { newId } from "../ids.ts";
import { type Bus, write } from "../mod.ts";
import type { Session } from "../session.ts";
import { appendMessages, MAX_MESSAGE_ID_CHARS, unusedMessageId } from "../append.ts";
import { cleanName, metadataJson } from "../validate.ts";
import { type NewAttachment, splitAttachments } from "./attachments.ts";
import { contentFilter, screenOptional, screenSecrets } from "../secrets.ts";
import { foundThreadTopic } from "./threads.ts";
import { giveWay, turnQuestion } from "./turns.ts";
import { issueSyncContext } from "./tokens.ts";
import { type ChatMessage, hashSecret, iso, REPLY_WINDOW, toChatMessage } from "./wire.ts";

/** Message roles. */
export const ROLES = ["user", "assistant", "system"] as const;
/** Message priorities. */
export const PRIORITIES = ["normal", "urgent", "system"] as const;
/** `metadata.stop_reason` values. */
export const STOP_REASONS = ["convergence", "timeout", "error", "complete", "impasse"] as const;
/** Longest author string. */
const MAX_AUTHOR_CHARS = 200;
/** Most messages a `SeqMismatchError` carries. */
const MAX_MISSED = 100;
/** Most mentions. */
const MAX_MENTIONS = 50;
const REMINDER =
  "Your reply_token is no longer usable. Call 'msg_wait' now to get a fresh reply_token before posting again.";

/** `msg_post`'s arguments. */
export interface PostArgs {
  thread_id: string;
  author: string;
  content: string;
  expected_last_seq?: number | undefined;
  reply_token?: string | undefined;
  role?: string | undefined;
  priority?: string | undefined;
  mentions?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  reply_to_msg_id?: string | undefined;
  /**
   * The caller is the operator (AgentChatBus's REST API, behind the console's
   * guard), not an agent: a token bound to no agent serves any author, as on
   * AgentChatBus. An agent's own MCP session never sets this, so an agent
   * still cannot post as another with a borrowed token.
   */
  asOperator?: boolean | undefined;
}

/** `msg_post`'s result. */
export interface PostResult {
  msg_id: string;
  seq: number;
  reply_to_msg_id: string | null;
  priority: string;
  handoff_target?: string;
  stop_reason?: string;
  current_seq?: number;
  reply_token?: string;
  reply_window?: typeof REPLY_WINDOW;
}

interface Prepared {
  author: string;
  content: string;
  terms: string;
  role: string;
  priority: string;
  metadataJson: string | null;
  metadata: Record<string, unknown> | null;
  attachments: NewAttachment[];
  replyTo: string | null;
  tokenHash: string | undefined;
}

/**
 * Post a message under the sync protocol.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`, `THREAD_CLOSED`, `INVALID_ARGUMENT`, and the four sync errors
 */
export async function postMessage(bus: Bus, session: Session, args: PostArgs): Promise<PostResult> {
  const prepared = preparePost(bus, args);
  // Fair turns are checked with the post's own reads; a post that owes another agent its turn
  // gives way (no lock held) and then posts without asking again.
  let owing: TurnState | undefined;
  for (let yielded = false;; yielded = true) {
    if (owing) await giveWay(bus, args.thread_id, prepared.author, owing);
    const outcome = await tryPost(bus, session, args, prepared, !yielded);
    if ("owing" in outcome) {
      owing = outcome.owing;
      continue;
    }
    if ("refusal" in outcome) throw outcome.refusal;
    return outcome.posted;
  }
}

/** One attempt of {@linkcode postMessage}, in one transaction. */
async function tryPost(
  bus: Bus,
  session: Session,
  args: PostArgs,
  prepared: Prepared,
  checkTurns: boolean,
): Promise<{ owing: TurnState } | { refusal: BusError } | { posted: PostResult }> {
  return await write(bus, () => {
    const context = readPostContext(bus, args.thread_id, prepared, checkTurns);
    if (context.turns?.contested) return { owing: context.turns };
    const thread = context.thread;
    if (thread.status === "closed") {
      throw new BusError(
        "THREAD_CLOSED",
        `Thread '${args.thread_id}' is closed and does not accept new messages.`,
        { context: { thread_id: args.thread_id } },
      );
    }
    if (prepared.replyTo !== null && !context.replyFound) {
      throw invalidArgument(
        `reply_to_msg_id '${prepared.replyTo}' does not exist in thread '${thread.topic_id}'`,
      );
    }
    const { agent, token } = context;
    const refusal = checkSync(bus, thread.topic_id, agent, args.expected_last_seq, prepared, {
      token,
      latest: context.nextSeq - 1,
      asOperator: args.asOperator ?? false,
    });
    if (refusal) {
      if (agent && provenAgent(session, thread.topic_id, agent, token)) {
        const now = bus.now();
        invalidateReplyTokens(bus.store, {
          topicId: thread.topic_id,
          agentId: agent.agent_id,
          now,
        });
        setRefreshRequest(bus.store, {
          topicId: thread.topic_id,
          agentId: agent.agent_id,
          reason: refusal.code,
          now,
        });
        recordLostRace(bus.store, { topicId: thread.topic_id, agentId: agent.agent_id, now });
      }
      return { refusal };
    }
    consumeReplyToken(bus.store, { tokenHash: prepared.tokenHash!, now: bus.now() });
    return { posted: insertPost(bus, session, context, prepared) };
  }, { topics: [args.thread_id] });
}

/**
 * Whether the caller proved it is `agent`: its session is bound to the agent,
 * or it holds one of the agent's tokens for this thread (used or not). The
 * `author` field alone proves nothing: a refusal retires the named agent's
 * tokens only when the caller is that agent, so another session cannot
 * silence it by posting in its name with a made-up token.
 */
function provenAgent(
  session: Session,
  topicId: string,
  agent: AgentRow,
  token: ReplyTokenRow | undefined,
): boolean {
  if (session.chatAgent?.agentId === agent.agent_id) return true;
  return token?.agent_id === agent.agent_id && token.topic_id === topicId;
}

/** What a post reads before it decides, read in one go (one round trip on PostgreSQL). */
interface PostContext {
  thread: TopicRow;
  /** The author, when it names a registered agent. */
  agent: AgentRow | undefined;
  /** The reply token presented, when it exists. */
  token: ReplyTokenRow | undefined;
  replyFound: boolean;
  nextSeq: number;
  /** A fresh message id, checked free. */
  messageId: string;
  /** Whether the author owes another agent its turn (when asked). */
  turns: TurnState | undefined;
}

/**
 * Read {@linkcode PostContext} inside the post's transaction.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
function readPostContext(
  bus: Bus,
  threadId: string,
  prepared: Prepared,
  checkTurns: boolean,
): PostContext {
  if (threadId.length > 64) foundThreadTopic(undefined, threadId);
  const id = newId();
  const turns = checkTurns && prepared.author.length <= 64
    ? [turnStateQuery(turnQuestion(bus, threadId, prepared.author))]
    : [];
  const context = readSendContext(bus.store, {
    topicId: threadId,
    now: bus.now(),
    outbox: {
      sender: prepared.author,
      ids: [id],
      clientMessageIds: [],
      replyTos: prepared.replyTo === null ? [] : [prepared.replyTo],
    },
    also: [
      { sql: GET_AGENT_SQL, params: [prepared.author.length <= 64 ? prepared.author : ""] },
      { sql: GET_REPLY_TOKEN_SQL, params: [prepared.tokenHash ?? ""] },
      ...turns,
    ],
  });
  const [agents, tokens, turnRows] = context.also as unknown as [
    AgentRow[],
    ReplyTokenRow[],
    Record<string, unknown>[] | undefined,
  ];
  const outbox = context.outbox!;
  return {
    thread: foundThreadTopic(context.topic, threadId),
    agent: agents[0],
    token: prepared.tokenHash === undefined ? undefined : tokens[0],
    replyFound: prepared.replyTo !== null && outbox.repliesFound.has(prepared.replyTo),
    nextSeq: outbox.nextSeq,
    messageId: outbox.takenIds.has(id) ? unusedMessageId(bus.store) : id,
    turns: turnRows && toTurnState(turnRows[0]),
  };
}

/** Check `metadata` and the other fields before the write lock is taken. */
function preparePost(bus: Bus, args: PostArgs): Prepared {
  if (!args.content.trim()) throw invalidArgument("content must be a non-empty string");
  if (args.content.length > bus.config.maxMessageChars) {
    throw invalidArgument(`content exceeds max length (${bus.config.maxMessageChars})`);
  }
  const content = screenSecrets(args.content, contentFilter(bus.config, "content"));
  const role = oneOf(args.role ?? "user", ROLES, "role");
  const priority = oneOf(args.priority ?? "normal", PRIORITIES, "priority");
  const { metadata, attachments } = splitAttachments(args.metadata, bus.config.maxAttachmentBytes);
  const meta: Record<string, unknown> | null = metadata ? { ...metadata } : null;
  if (meta?.stop_reason !== undefined) {
    if (typeof meta.stop_reason !== "string") {
      throw invalidArgument("metadata.stop_reason must be a string");
    }
    oneOf(meta.stop_reason, STOP_REASONS, "metadata.stop_reason");
  }
  if (meta?.handoff_target !== undefined && typeof meta.handoff_target !== "string") {
    throw invalidArgument("metadata.handoff_target must be an agent id (a string)");
  }
  const mentions = [...(args.mentions ?? []), ...stringList(meta?.mentions, "metadata.mentions")];
  if (mentions.length > MAX_MENTIONS) {
    throw invalidArgument(`mentions has ${mentions.length} entries; the most is ${MAX_MENTIONS}`);
  }
  const withMentions = args.mentions?.length ? { ...meta, mentions } : meta;
  return {
    author: cleanName(args.author, "author", MAX_AUTHOR_CHARS),
    content,
    terms: termsForSend(bus.store, content),
    role,
    priority,
    metadata: withMentions,
    metadataJson: screenOptional(
      metadataJson(withMentions, "metadata", bus.config.maxMetadataChars),
      contentFilter(bus.config, "metadata"),
    ),
    attachments,
    replyTo: args.reply_to_msg_id
      ? cleanName(args.reply_to_msg_id, "reply_to_msg_id", MAX_MESSAGE_ID_CHARS)
      : null,
    tokenHash: args.reply_token === undefined || args.reply_token.length > 256
      ? undefined
      : hashSecret(args.reply_token),
  };
}

/** The sync error for this post, if any (research 2.9, in AgentChatBus's order). */
function checkSync(
  bus: Bus,
  topicId: string,
  agent: AgentRow | undefined,
  expected: number | undefined,
  prepared: Prepared,
  { token, latest, asOperator }: {
    token: ReplyTokenRow | undefined;
    latest: number;
    asOperator: boolean;
  },
): BusError | undefined {
  const missing = [
    ...(expected === undefined ? ["expected_last_seq"] : []),
    ...(prepared.tokenHash === undefined ? ["reply_token"] : []),
  ];
  if (missing.length > 0) {
    return syncError(
      "MissingSyncFieldsError",
      `Missing required sync fields: ${missing.join(", ")}`,
      { REMINDER, action: "CALL_MSG_WAIT" },
    );
  }
  // The operator (AgentChatBus's REST) may use an unbound token for an agent, and any token of
  // the thread for an author who is no agent, as AgentChatBus allows; agents may not.
  const wrongHolder = token &&
    (agent
      ? token.agent_id !== agent.agent_id && !(asOperator && token.agent_id === null)
      : token.agent_id !== null && !asOperator);
  if (!token || token.topic_id !== topicId || wrongHolder) {
    return syncError("ReplyTokenInvalidError", "TOKEN_INVALID", {
      REMINDER,
      action: "CALL_MSG_WAIT",
    });
  }
  if (token.consumed_at !== null) {
    return syncError("ReplyTokenReplayError", "TOKEN_REPLAY", {
      REMINDER,
      action: "CALL_MSG_WAIT",
      consumed_at: iso(token.consumed_at),
    });
  }
  if (latest - expected! > 0) {
    const rows = chatMessagesAfter(bus.store, { topicId, afterSeq: expected!, limit: MAX_MISSED });
    const fits = countWithinBudget(
      rows,
      (r) => [r.content_markdown, r.metadata_json],
      bus.config.toolResultMaxBytes,
    );
    const missed: ChatMessage[] = rows.slice(0, fits).map((row) => toChatMessage(row, []));
    return syncError(
      "SeqMismatchError",
      `SEQ_MISMATCH: expected_last_seq=${expected}, current_seq=${latest}`,
      {
        expected_last_seq: expected,
        current_seq: latest,
        CRITICAL_REMINDER:
          "Your msg_post was rejected! NEW context arrived while you were trying to " +
          "post. You MUST read the 'new_messages_1st_read' below NOW to understand what changed. " +
          "Do NOT blindly retry your old message! Next, you MUST call 'msg_wait' to get a fresh " +
          "reply_token. When you do, you will receive these messages again (2nd read). Only AFTER " +
          "that, formulate a NEW response.",
        new_messages_1st_read: missed,
        ...(fits < rows.length || latest - expected! > rows.length
          ? { new_messages_truncated: true }
          : {}),
        action: "READ_MESSAGES_THEN_CALL_MSG_WAIT",
      },
    );
  }
  return undefined;
}

/** A sync error in AgentChatBus's shape: its name as the code, `detail` and the rest beside it. */
function syncError(
  code:
    | "MissingSyncFieldsError"
    | "ReplyTokenInvalidError"
    | "ReplyTokenReplayError"
    | "SeqMismatchError",
  detail: string,
  context: Record<string, unknown>,
): BusError {
  return new BusError(code, detail, { context: { detail, ...context } });
}

function insertPost(
  bus: Bus,
  session: Session,
  { thread, agent, nextSeq: seq, messageId }: PostContext,
  prepared: Prepared,
): PostResult {
  const store = bus.store;
  const now = bus.now();
  const topicId = thread.topic_id;
  appendMessages(store, {
    topicId,
    now,
    rows: [{
      message_id: messageId,
      topic_id: topicId,
      seq,
      sender: agent?.name ?? prepared.author,
      message_type: "message",
      reply_to: prepared.replyTo,
      content_markdown: prepared.content,
      metadata_json: prepared.metadataJson,
      client_message_id: null,
      created_at: now,
      terms: prepared.terms,
    }],
  });
  insertChatExtras(store, {
    message_id: messageId,
    author_id: agent?.agent_id ?? null,
    role: prepared.role,
    priority: prepared.priority,
  });
  for (const [position, attachment] of prepared.attachments.entries()) {
    insertAttachment(store, {
      message_id: messageId,
      position,
      mime_type: attachment.mimeType,
      data: attachment.data,
    });
  }
  const result: PostResult = {
    msg_id: messageId,
    seq,
    reply_to_msg_id: prepared.replyTo,
    priority: prepared.priority,
  };
  const meta = prepared.metadata;
  if (typeof meta?.handoff_target === "string") result.handoff_target = meta.handoff_target;
  if (typeof meta?.stop_reason === "string") result.stop_reason = meta.stop_reason;
  if (agent) {
    touchAgent(store, { agentId: agent.agent_id, activity: "msg_post", now });
    exitChatWait(store, { topicId, agentId: agent.agent_id });
    clearTyping(store, { topicId, agentName: agent.name });
    invalidateReplyTokens(store, { topicId, agentId: agent.agent_id, now });
    dropRefreshRequest(store, { topicId, agentId: agent.agent_id });
    Object.assign(
      result,
      issueSyncContext(bus, session, {
        topicId,
        agentId: agent.agent_id,
        source: "msg_post_chain",
        currentSeq: seq,
      }),
    );
  }
  return result;
}

function oneOf<const T extends readonly string[]>(
  value: string,
  allowed: T,
  field: string,
): T[number] {
  if (!(allowed as readonly string[]).includes(value)) {
    throw invalidArgument(
      `Invalid ${field} '${value.slice(0, 64)}'. Must be one of: ${allowed.join(", ")}`,
    );
  }
  return value;
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
    throw invalidArgument(`${field} must be an array of agent ids (strings)`);
  }
  return value as string[];
}
