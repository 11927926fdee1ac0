/**
 * The wire shape of a message (seed section 4.3, "Message fields").
 *
 * @module
 */

import type { MessageRow } from "../store/messages.ts";
import { parseMetadata } from "./validate.ts";

/** A message as `sync` returns it: the stored row with its metadata parsed. */
export interface Message extends Omit<MessageRow, "metadata_json"> {
  metadata: Record<string, unknown> | null;
  /** What the chatbus dialect added (console views only; see `chat/extras.ts`). */
  chat?: ChatExtras;
}

/** A chatbus message's role, priority, edits, reactions and images, as the console shows them. */
export interface ChatExtras {
  author_id: string | null;
  role: string;
  priority: string;
  edit_version: number;
  edited_at: number | null;
  reactions: { reaction: string; agent_id: string }[];
  /** MIME types of the images, by position (`/api/messages/{id}/attachments/{n}`). */
  attachments: string[];
}

/** Convert a stored row to its wire shape. */
export function toMessage(row: MessageRow): Message {
  return {
    message_id: row.message_id,
    topic_id: row.topic_id,
    seq: row.seq,
    sender: row.sender,
    message_type: row.message_type,
    reply_to: row.reply_to,
    content_markdown: row.content_markdown,
    metadata: parseMetadata(row.metadata_json),
    client_message_id: row.client_message_id,
    created_at: row.created_at,
  };
}
