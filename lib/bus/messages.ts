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
