/**
 * The chatbus dialect's wire shapes (seed 002, as AgentChatBus returns
 * them): ISO timestamps in UTC with `+00:00`, messages with `msg_id` and
 * `content`, the sync context, and the secrets' hashes.
 *
 * @module
 */

import process from "node:process";
import type { AttachmentRow, ChatMessageRow, ReactionRow } from "../../store/chat/mod.ts";
import { parseMetadata } from "../validate.ts";

/** `reply_window` of every sync context: tokens do not expire and no new messages are allowed. */
export const REPLY_WINDOW = { expires_at: "9999-12-31T23:59:59+00:00", max_new_messages: 0 };

/** What `thread_create`, `bus_connect`, `msg_wait` and `msg_post` hand an agent for its next post. */
export interface SyncContext {
  current_seq: number;
  reply_token: string;
  reply_window: typeof REPLY_WINDOW;
}

/** A unix time as AgentChatBus writes it: `2026-11-23T10:22:01.123000+00:00`. */
export function iso(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace(/\.(\d{3})Z$/, ".$1000+00:00");
}

/** A unix time from an ISO date, or undefined when it is not one. */
export function fromIso(text: string): number | undefined {
  const ms = Date.parse(text.slice(0, 64));
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/**
 * `node:crypto`, loaded on first use: evaluating it costs about 20 ms, which
 * every server would pay at start-up although only the chatbus dialect
 * hashes tokens (Web Crypto has no synchronous hash).
 */
let nodeCrypto: typeof import("node:crypto") | undefined;

/** SHA-256 of a secret, hex: the only form in which tokens are stored. */
export function hashSecret(secret: string): string {
  nodeCrypto ??= process.getBuiltinModule("node:crypto") as typeof import("node:crypto");
  return nodeCrypto.createHash("sha256").update(secret).digest("hex");
}

/** A new agent token (32 random bytes, hex, as AgentChatBus issues them). */
export function newAgentToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A new reply token (24 random bytes, base64url). */
export function newReplyToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
}

/** A reaction as tools return it. */
export interface Reaction {
  message_id: string;
  agent_id: string;
  reaction: string;
  created_at: string;
}

/** A message in the chatbus dialect. */
export interface ChatMessage {
  msg_id: string;
  thread_id: string;
  seq: number;
  author: string;
  author_id: string | null;
  author_name: string;
  role: string;
  priority: string;
  content: string;
  created_at: string;
  metadata: Record<string, unknown> | null;
  reply_to_msg_id: string | null;
  edited_at: string | null;
  edit_version: number;
  reactions: Reaction[];
}

/** Convert a reaction row. */
export function toReaction(row: ReactionRow): Reaction {
  return {
    message_id: row.message_id,
    agent_id: row.agent_id,
    reaction: row.reaction,
    created_at: iso(row.created_at),
  };
}

/** Convert a stored message with its extras and reactions. */
export function toChatMessage(
  row: ChatMessageRow,
  reactions: readonly ReactionRow[],
  authorName?: string,
): ChatMessage {
  return {
    msg_id: row.message_id,
    thread_id: row.topic_id,
    seq: row.seq,
    author: row.sender,
    author_id: row.author_id,
    author_name: authorName ?? row.sender,
    role: row.role,
    priority: row.priority,
    content: row.content_markdown,
    created_at: iso(row.created_at),
    metadata: parseMetadata(row.metadata_json),
    reply_to_msg_id: row.reply_to,
    edited_at: row.edited_at === null ? null : iso(row.edited_at),
    edit_version: row.edit_version,
    // A message takes at most MAX_REACTIONS (older buses may hold more): show that many.
    reactions: reactions.filter((r) => r.message_id === row.message_id).slice(0, MAX_REACTIONS)
      .map(toReaction),
  };
}

/** Most reactions a message takes, and shows. */
export const MAX_REACTIONS = 100;

/** An attachment as an MCP content block: an `image`, or an embedded `resource` for a file. */
export type AttachmentBlock =
  | { type: "image"; data: string; mimeType: string }
  | { type: "resource"; resource: { uri: string; mimeType: string; blob: string } }
  | { type: "text"; text: string };

/** The content blocks of one message's attachments, in order. */
export function attachmentBlocks(
  messageId: string,
  attachments: readonly AttachmentRow[],
): Exclude<AttachmentBlock, { type: "text" }>[] {
  return attachments.filter((a) => a.message_id === messageId).map((a) =>
    a.mime_type.startsWith("image/") ? { type: "image", data: a.data, mimeType: a.mime_type } : {
      type: "resource",
      resource: {
        uri: `agent-bus://messages/${encodeURIComponent(messageId)}/attachments/${a.position}`,
        mimeType: a.mime_type,
        blob: a.data,
      },
    }
  );
}
