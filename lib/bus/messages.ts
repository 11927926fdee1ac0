/**
 * The wire shape of a message (seed section 4.3, "Message fields").
 *
 * @module
 */

import type { MessageRow } from "../store/messages.ts";
import { parseMetadata } from "./validate.ts";

/** A message as `sync` returns it in `received` and `sent[].message`. */
export interface Message {
  message_id: string;
  topic_id: string;
  seq: number;
  sender: string;
  message_type: string;
  reply_to: string | null;
  content_markdown: string;
  metadata: Record<string, unknown> | null;
  client_message_id: string | null;
  created_at: number;
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
