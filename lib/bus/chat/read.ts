/**
 * Reading and changing chatbus messages: `msg_list`, `msg_get`,
 * `msg_edit`, `msg_edit_history`, `msg_react`, `msg_unreact`.
 *
 * `msg_wait` is in `wait.ts`.
 *
 * @module
 */

import { countWithinBudget } from "../../budget.ts";
import { BusError, invalidArgument } from "../../errors.ts";
import { recordChatEvent } from "../../store/chat/events.ts";
import { contentFilter, screenSecrets } from "../secrets.ts";
import {
  addReaction,
  type ChatMessageRow,
  chatMessagesAfter,
  chatMessagesNewest,
  editsOf,
  getChatMessage,
  getReaction,
  reactionCount,
  readMessageExtras,
  recordEdit,
  removeReaction,
} from "../../store/chat/mod.ts";
import { latestSeq } from "../../store/messages.ts";
import type { Store } from "../../store/mod.ts";
import { type Bus, write } from "../mod.ts";
import type { Session } from "../session.ts";
import { cleanName } from "../validate.ts";
import { authenticate, displayName } from "./agents.ts";
import { requireThread } from "./threads.ts";
import {
  type AttachmentBlock,
  attachmentBlocks,
  type ChatMessage,
  iso,
  MAX_REACTIONS,
  toChatMessage,
  toReaction,
} from "./wire.ts";

/** Most messages one `msg_list` or `msg_wait` returns. */
export const MAX_MESSAGES = 100;
/** Longest reaction label. */
const MAX_REACTION_CHARS = 64;
/** Most reactions on one message (every agent and label together). */
export const MAX_REACTIONS_PER_MESSAGE = MAX_REACTIONS;

/**
 * The directive every thread starts with (the synthetic seq-0 message),
 * in the spirit of AgentChatBus's.
 */
export const THREAD_DIRECTIVE =
  `You are one of several agents working in the same repository and environment, coordinating in this thread.
1. Shared context: the others see the same files, processes and state you do.
2. Move the work forward: propose concrete next steps, claim tasks and carry them out.
3. Announce before destructive commands or broad refactors, and wait briefly for objections; for ordinary scoped edits, say what you change and go on.
4. Say which files or modules you are about to edit; never edit a file another agent is editing.
5. Keep the thread useful: post status, blockers and next actions; after repeated msg_wait timeouts, post an update instead of idling.
6. No noise such as "still waiting": every message should carry information, a decision or a request.`;

/** A listed message and its images. */
export interface ListedMessage {
  message: ChatMessage;
  attachments: AttachmentBlock[];
}

/** `msg_list`'s arguments. */
export interface ListArgs {
  thread_id: string;
  after_seq: number;
  limit: number;
  priority?: string | undefined;
  include_system_prompt: boolean;
  /** Read the images too (default true; false skips their data). */
  include_attachments?: boolean | undefined;
}

/** `msg_list`: messages after `after_seq`, within the result budget; `has_more` when cut. */
export function listMessages(
  bus: Bus,
  args: ListArgs,
): { messages: ListedMessage[]; has_more: boolean } {
  if (args.after_seq < 0) throw invalidArgument("after_seq must be an int >= 0");
  const limit = Math.min(Math.max(args.limit, 1), MAX_MESSAGES);
  return bus.store.read(() => {
    const thread = requireThread(bus.store, args.thread_id);
    const rows = chatMessagesAfter(bus.store, {
      topicId: thread.topic_id,
      afterSeq: args.after_seq,
      priority: args.priority,
      limit: limit + 1,
    });
    const within = rows.slice(0, limit);
    const page = within.slice(0, fitting(bus, within));
    const listed = listedOf(
      bus.store,
      page,
      args.include_attachments ?? true,
      bus.config.maxAttachmentBytes,
    );
    const promptShows = args.priority === undefined || args.priority === "normal";
    if (args.include_system_prompt && args.after_seq === 0 && promptShows) {
      listed.unshift({
        message: systemPromptMessage(thread.topic_id, thread.system_prompt, thread.created_at),
        attachments: [],
      });
    }
    return { messages: listed, has_more: rows.length > page.length };
  });
}

/**
 * What `bus_connect` shows of a thread: everything after `after_seq` (with
 * the system prompt first) when it fits the result budget, else the newest
 * messages that fit and what was left out (see {@linkcode catchUpWindow}).
 */
export function connectHistory(
  bus: Bus,
  { threadId, afterSeq }: { threadId: string; afterSeq: number },
): { messages: ListedMessage[]; skipped: SkippedMessages | undefined } {
  const all = listMessages(bus, {
    thread_id: threadId,
    after_seq: afterSeq,
    limit: MAX_MESSAGES,
    include_system_prompt: true,
    include_attachments: false,
  });
  if (!all.has_more) return { messages: all.messages, skipped: undefined };
  return bus.store.read(() => {
    const window = catchUpWindow(bus, { topicId: threadId, afterSeq, rows: [] });
    return { messages: listedOf(bus.store, window.rows, false), skipped: window.skipped };
  });
}

/** A thread's latest `count` messages, one line each: `[seq] author (role): content`. */
export function transcript(bus: Bus, threadId: string, count: number): string {
  return bus.store.read(() => {
    const thread = requireThread(bus.store, threadId);
    const latest = latestSeq(bus.store, thread.topic_id);
    const rows = chatMessagesAfter(bus.store, {
      topicId: thread.topic_id,
      afterSeq: Math.max(0, latest - count),
      limit: count,
    });
    return listedOf(bus.store, rows, false).map(({ message }) =>
      `[${message.seq}] ${message.author_name} (${message.role}): ${message.content}`
    ).join("\n");
  });
}

/** `msg_get`: one message with its reactions, or `found: false`. */
export function getMessage(
  bus: Bus,
  messageId: string,
): { found: true; message: ChatMessage } | { found: false; message: null } {
  const row = messageId.length <= 64
    ? bus.store.read(() => getChatMessage(bus.store, messageId))
    : undefined;
  if (!row) return { found: false, message: null };
  return {
    found: true,
    message: bus.store.read(() => listedOf(bus.store, [row], false))[0]!.message,
  };
}

/**
 * `msg_edit`: the author replaces a message's content; the old one is kept.
 *
 * @throws {BusError} `AUTHENTICATION_REQUIRED`, `MESSAGE_NOT_FOUND`, `PermissionError`, `INVALID_ARGUMENT`
 */
export async function editMessage(
  bus: Bus,
  session: Session,
  args: {
    message_id: string;
    new_content: string;
    agent_id?: string | undefined;
    token?: string | undefined;
  },
): Promise<EditResult> {
  const content = checkNewContent(bus, args.new_content);
  const credentials = credentialsOf(session, args, "AUTHENTICATION_REQUIRED");
  return await write(bus, () => {
    const agent = authenticate(bus.store, credentials.agentId, credentials.token);
    session.chatAgent = credentials;
    return recordVersion(bus, args.message_id, content, agent.agent_id);
  });
}

/**
 * AgentChatBus's REST edit: the operator (behind the console's guard) edits
 * for `edited_by`, which must be the message's author (its agent id or
 * name) or `system`, as there.
 *
 * @throws {BusError} `MESSAGE_NOT_FOUND`, `PermissionError`, `INVALID_ARGUMENT`
 */
export async function editMessageAsOperator(
  bus: Bus,
  args: { message_id: string; new_content: string; edited_by: string },
): Promise<EditResult> {
  const content = checkNewContent(bus, args.new_content);
  return await write(
    bus,
    () =>
      recordVersion(
        bus,
        args.message_id,
        content,
        args.edited_by,
        (row) =>
          args.edited_by === "system" || row.author_id === args.edited_by ||
          row.sender === args.edited_by,
      ),
  );
}

/** What an edit answers. */
export type EditResult = { no_change: true; version: number } | {
  msg_id: string;
  version: number;
  edited_at: string;
  edited_by: string;
};

/** A new version's content as it may be stored (checked, its secrets screened). */
function checkNewContent(bus: Bus, content: string): string {
  if (!content.trim()) throw invalidArgument("new_content must be a non-empty string");
  if (content.length > bus.config.maxMessageChars) {
    throw invalidArgument(`new_content exceeds max length (${bus.config.maxMessageChars})`);
  }
  return screenSecrets(content, contentFilter(bus.config, "new_content"));
}

/** Store a message's new version (inside a write), when `editor` may edit it. */
function recordVersion(
  bus: Bus,
  messageId: string,
  content: string,
  editor: string,
  mayEdit: (row: ChatMessageRow) => boolean = (row) => row.author_id === editor,
): EditResult {
  const row = requireMessage(bus.store, messageId);
  if (row.role === "system") {
    throw new BusError("PermissionError", "System messages cannot be edited");
  }
  if (!mayEdit(row)) {
    throw new BusError("PermissionError", "Only the original author can edit this message");
  }
  if (row.content_markdown === content) {
    return { no_change: true as const, version: row.edit_version };
  }
  const now = bus.now();
  const version = row.edit_version + 1;
  recordEdit(bus.store, {
    messageId: row.message_id,
    oldContent: row.content_markdown,
    newContent: content,
    editedBy: editor,
    version,
    now,
  });
  messageEvent(bus, "msg.edit", row);
  return { msg_id: row.message_id, version, edited_at: iso(now), edited_by: editor };
}

/**
 * `msg_edit_history`: the current content and every earlier one, oldest first.
 *
 * @throws {BusError} `MESSAGE_NOT_FOUND`
 */
export function editHistory(bus: Bus, messageId: string): {
  message_id: string;
  current_content: string;
  edit_version: number;
  edits: { version: number; old_content: string; edited_by: string; created_at: string }[];
} {
  return bus.store.read(() => {
    const row = requireMessage(bus.store, messageId);
    return {
      message_id: row.message_id,
      current_content: row.content_markdown,
      edit_version: row.edit_version,
      edits: editsOf(bus.store, row.message_id).map((edit) => ({
        version: edit.version,
        old_content: edit.old_content,
        edited_by: edit.edited_by,
        created_at: iso(edit.created_at),
      })),
    };
  });
}

/** Who reacts, and how they prove it: `msg_react` and `msg_unreact`'s arguments. */
interface ReactionArgs {
  message_id: string;
  reaction: string;
  agent_id?: string | undefined;
  token?: string | undefined;
  /**
   * The operator (AgentChatBus's REST API, behind the console's guard) reacts
   * on behalf of `agent_id`, as AgentChatBus's REST trusts it to; an agent's
   * MCP session never sets this.
   */
  asOperator?: boolean | undefined;
}

/**
 * `msg_react`: idempotent. The connection's agent reacts, or `agent_id` with
 * its `token`: a reaction in another agent's name needs that agent's token.
 * A message takes at most {@linkcode MAX_REACTIONS_PER_MESSAGE} reactions.
 *
 * @throws {BusError} `MESSAGE_NOT_FOUND`, `INVALID_ARGUMENT`, `AUTHENTICATION_REQUIRED`
 */
export async function react(
  bus: Bus,
  session: Session,
  args: ReactionArgs,
): Promise<
  { message_id: string; agent_id: string; reaction: string; created_at: string; added: boolean }
> {
  const reaction = cleanName(args.reaction, "reaction", MAX_REACTION_CHARS);
  return await write(bus, () => {
    const agentId = reactor(bus, session, args);
    const message = requireMessage(bus.store, args.message_id);
    const existing = getReaction(bus.store, { messageId: args.message_id, agentId, reaction });
    if (existing) return { ...toReaction(existing), added: false };
    if (reactionCount(bus.store, args.message_id) >= MAX_REACTIONS_PER_MESSAGE) {
      throw invalidArgument(
        `Message '${args.message_id}' has ${MAX_REACTIONS_PER_MESSAGE} reactions, the most it ` +
          "takes; remove one first",
      );
    }
    const added = addReaction(bus.store, {
      message_id: args.message_id,
      agent_id: agentId,
      reaction,
      created_at: bus.now(),
    });
    if (added) messageEvent(bus, "msg.react", message);
    const row = getReaction(bus.store, { messageId: args.message_id, agentId, reaction })!;
    return { ...toReaction(row), added };
  });
}

/**
 * `msg_unreact`: `removed` says whether the reaction was there.
 *
 * @throws {BusError} `MESSAGE_NOT_FOUND`, `INVALID_ARGUMENT`, `AUTHENTICATION_REQUIRED`
 */
export async function unreact(
  bus: Bus,
  session: Session,
  args: ReactionArgs,
): Promise<{ removed: boolean; message_id: string; reaction: string }> {
  const reaction = cleanName(args.reaction, "reaction", MAX_REACTION_CHARS);
  const removed = await write(bus, () => {
    const agentId = reactor(bus, session, args);
    const message = requireMessage(bus.store, args.message_id);
    const removed = removeReaction(bus.store, { messageId: args.message_id, agentId, reaction });
    if (removed) messageEvent(bus, "msg.unreact", message);
    return removed;
  });
  return { removed, message_id: args.message_id, reaction };
}

/** Journal a change to a message (inside its write) for AgentChatBus's event stream. */
function messageEvent(
  bus: Bus,
  kind: "msg.edit" | "msg.react" | "msg.unreact",
  message: { message_id: string; topic_id: string },
): void {
  recordChatEvent(bus.store, {
    kind,
    ref: message.message_id,
    topicId: message.topic_id,
    now: bus.now(),
  });
}

/** The synthetic seq-0 message: the directive, then the thread's own prompt. */
export function systemPromptMessage(
  threadId: string,
  threadPrompt: string | null,
  createdAt: number,
): ChatMessage {
  return {
    msg_id: `sys-${threadId}`,
    thread_id: threadId,
    seq: 0,
    author: "system",
    author_id: "system",
    author_name: "System",
    role: "system",
    priority: "normal",
    content: threadPrompt
      ? `## Section: System (Built-in)\n\n${THREAD_DIRECTIVE}\n\n## Section: Thread Create (Provided By Creator)\n\n${threadPrompt}`
      : THREAD_DIRECTIVE,
    created_at: iso(createdAt),
    metadata: null,
    reply_to_msg_id: null,
    edited_at: null,
    edit_version: 0,
    reactions: [],
  };
}

/** Rows with their reactions, images and authors' display names. */
export function listedOf(
  store: Store,
  rows: readonly ChatMessageRow[],
  withImages: boolean,
  maxAttachmentBytes = 0,
): ListedMessage[] {
  const { reactions, attachments, authors } = readMessageExtras(store, {
    messageIds: rows.map((row) => row.message_id),
    authorIds: [...new Set(rows.flatMap((row) => row.author_id ? [row.author_id] : []))],
    withAttachments: withImages,
  });
  const names = new Map(authors.map((agent) => [agent.agent_id, displayName(agent)]));
  // Attachments share one budget per result (one attachment's size, AGENT_BUS_MAX_ATTACHMENT_BYTES):
  // past it, a block says what was left out and where to fetch it.
  let room = maxAttachmentBytes;
  return rows.map((row) => ({
    message: toChatMessage(row, reactions, row.author_id ? names.get(row.author_id) : undefined),
    attachments: attachmentBlocks(row.message_id, attachments).map((block, position) => {
      const size = block.type === "image" ? block.data.length : block.resource.blob.length;
      if (size <= room) {
        room -= size;
        return block;
      }
      room = 0;
      return omittedAttachment(row.message_id, position, size);
    }),
  }));
}

/** What stands for an attachment that did not fit in the result. */
function omittedAttachment(messageId: string, position: number, size: number): AttachmentBlock {
  return {
    type: "text",
    text: `[attachment ${position} of message ${messageId} (${size} bytes of base64) left out ` +
      `to keep this result small: GET /api/messages/${messageId}/attachments/${position} on the ` +
      `HTTP server, or read fewer messages at once]`,
  };
}

/** How many rows fit the result budget (images are not counted: clients show them apart). */
export function fitting(bus: Bus, rows: readonly ChatMessageRow[]): number {
  return countWithinBudget(
    rows,
    (row) => [row.sender, row.content_markdown, row.metadata_json],
    bus.config.toolResultMaxBytes,
  );
}

/** Messages after a point that were left out of a window, and how to read them. */
export interface SkippedMessages {
  count: number;
  /** The first and last seq left out. */
  from_seq: number;
  through_seq: number;
  /** The call that pages them, oldest first. */
  page_with: string;
}

/** What a catching-up read returns: the newest messages that fit, and what it left out. */
export interface CatchUpWindow {
  rows: ChatMessageRow[];
  skipped: SkippedMessages | undefined;
}

/**
 * The messages after `afterSeq` for an agent catching up (`bus_connect`,
 * `msg_wait`): all of them when they fit the result budget, else the newest
 * that fit, with a count of the earlier ones and the `msg_list` call that
 * pages them. The sync context then stays at the thread's latest seq, so
 * the agent can post after one read, however far behind it was (and
 * nothing was left out without saying so). Call inside a read.
 */
export function catchUpWindow(
  bus: Bus,
  { topicId, afterSeq, rows }: { topicId: string; afterSeq: number; rows: ChatMessageRow[] },
): CatchUpWindow {
  const latest = latestSeq(bus.store, topicId);
  const everything = rows.length > 0 && rows.at(-1)!.seq === latest;
  if (everything && fitting(bus, rows) === rows.length) return { rows, skipped: undefined };
  const newest = chatMessagesNewest(bus.store, { topicId, afterSeq, limit: MAX_MESSAGES });
  const fit = fittingFromEnd(bus, newest);
  const window = newest.slice(newest.length - fit);
  const first = window[0]?.seq ?? latest + 1;
  if (first <= afterSeq + 1) return { rows: window, skipped: undefined };
  return {
    rows: window,
    skipped: {
      count: first - afterSeq - 1,
      from_seq: afterSeq + 1,
      through_seq: first - 1,
      page_with: `msg_list(thread_id="${topicId}", after_seq=${afterSeq}, limit=${MAX_MESSAGES})`,
    },
  };
}

/** How many of the last rows fit the result budget together (at least one). */
function fittingFromEnd(bus: Bus, rows: readonly ChatMessageRow[]): number {
  return Math.max(fitting(bus, [...rows].reverse()), rows.length > 0 ? 1 : 0);
}

function requireMessage(store: Store, messageId: string): ChatMessageRow {
  const row = messageId.length <= 64 ? getChatMessage(store, messageId) : undefined;
  if (!row) {
    throw new BusError("MESSAGE_NOT_FOUND", `Message '${messageId}' not found`, {
      context: { message_id: messageId },
    });
  }
  return row;
}

/** Explicit credentials (both or neither), else the session's. */
export function credentialsOf(
  session: Session,
  args: { agent_id?: string | undefined; token?: string | undefined },
  code: "AUTHENTICATION_REQUIRED" | "InvalidCredentials",
): { agentId: string; token: string } {
  if (args.agent_id === undefined && args.token === undefined && session.chatAgent) {
    return session.chatAgent;
  }
  if (!args.agent_id || !args.token) {
    throw new BusError(
      code,
      "Pass both agent_id and token (or neither, on a connection that bus_connect authenticated)",
    );
  }
  return { agentId: args.agent_id, token: args.token };
}

/**
 * The agent a reaction is made as: the connection's own agent, or `agent_id`
 * proven by its `token` (call inside a transaction).
 */
function reactor(bus: Bus, session: Session, args: ReactionArgs): string {
  const own = session.chatAgent;
  const named = args.agent_id === undefined ? undefined : cleanName(args.agent_id, "agent_id", 64);
  if (args.token === undefined && own && (named === undefined || named === own.agentId)) {
    return own.agentId;
  }
  if (args.asOperator && named !== undefined && args.token === undefined) return named;
  if (named === undefined || args.token === undefined) {
    throw new BusError(
      "AUTHENTICATION_REQUIRED",
      named === undefined
        ? "This connection has no agent: call bus_connect first, or pass agent_id and token"
        : `Reacting as agent '${named}' needs its token: pass agent_id and token`,
    );
  }
  return authenticate(bus.store, named, args.token).agent_id;
}
