/**
 * The chatbus extras of messages for the console: role, priority, edit
 * version, reactions and image types, looked up for a page of messages in
 * three queries (call inside a read).
 *
 * @module
 */

import { attachmentTypesOf, chatExtrasOf, getAttachment, reactionsOf } from "../../store/chat.ts";
import type { Store } from "../../store/mod.ts";
import { BusError } from "../../errors.ts";
import type { Message } from "../messages.ts";
import type { Bus } from "../mod.ts";

/** `messages` with `chat` set on those the chatbus dialect touched. */
export function withChatExtras(store: Store, messages: Message[]): Message[] {
  const ids = messages.map((m) => m.message_id);
  const extras = new Map(chatExtrasOf(store, ids).map((row) => [row.message_id, row]));
  if (extras.size === 0) return messages;
  const reactions = reactionsOf(store, ids);
  const images = attachmentTypesOf(store, ids);
  return messages.map((message) => {
    const row = extras.get(message.message_id);
    if (!row) return message;
    return {
      ...message,
      chat: {
        author_id: row.author_id,
        role: row.role,
        priority: row.priority,
        edit_version: row.edit_version,
        edited_at: row.edited_at,
        reactions: reactions.filter((r) => r.message_id === message.message_id).map((r) => ({
          reaction: r.reaction,
          agent_id: r.agent_id,
        })),
        attachments: images.filter((a) => a.message_id === message.message_id).map((a) =>
          a.mime_type
        ),
      },
    };
  });
}

/**
 * One image of a message, decoded.
 *
 * @throws {BusError} `MESSAGE_NOT_FOUND` when the message has no such attachment
 */
export function attachmentBytes(
  bus: Bus,
  messageId: string,
  position: number,
): { bytes: Uint8Array<ArrayBuffer>; mimeType: string } {
  const row = messageId.length <= 64 && Number.isInteger(position)
    ? bus.store.read(() => getAttachment(bus.store, { messageId, position }))
    : undefined;
  if (!row) {
    throw new BusError(
      "MESSAGE_NOT_FOUND",
      `Message '${messageId}' has no attachment ${position}`,
      {
        context: { message_id: messageId },
      },
    );
  }
  return {
    bytes: Uint8Array.from(atob(row.data), (c) => c.charCodeAt(0)),
    mimeType: row.mime_type,
  };
}
