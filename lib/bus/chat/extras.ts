/**
 * The chatbus extras of messages for the console: role, priority, edit
 * version, reactions and attachment types, looked up for a page of messages
 * in three queries (call inside a read); and one attachment's bytes.
 *
 * @module
 */

import {
  attachmentTypesOf,
  chatExtrasOf,
  getAttachment,
  getChatMessage,
  reactionsOf,
} from "../../store/chat/mod.ts";
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

/** One attachment, decoded, with the file name its sender gave (if any). */
export interface AttachmentFile {
  bytes: Uint8Array<ArrayBuffer>;
  mimeType: string;
  name: string | undefined;
}

/**
 * One attachment of a message, decoded.
 *
 * @throws {BusError} `MESSAGE_NOT_FOUND` when the message has no such attachment
 */
export function attachmentFile(bus: Bus, messageId: string, position: number): AttachmentFile {
  const found = messageId.length <= 64 && Number.isInteger(position)
    ? bus.store.read(() => {
      const row = getAttachment(bus.store, { messageId, position });
      return row && { row, metadata: getChatMessage(bus.store, messageId)?.metadata_json ?? null };
    })
    : undefined;
  if (!found) {
    throw new BusError(
      "MESSAGE_NOT_FOUND",
      `Message '${messageId}' has no attachment ${position}`,
      {
        context: { message_id: messageId },
      },
    );
  }
  return {
    bytes: Uint8Array.from(atob(found.row.data), (c) => c.charCodeAt(0)),
    mimeType: found.row.mime_type,
    name: storedName(found.metadata, position),
  };
}

/**
 * The name in the metadata stub of the `position`-th stored attachment (stubs
 * with `bytes` are the stored ones, in order; URL stubs are not stored).
 */
function storedName(metadataJson: string | null, position: number): string | undefined {
  if (metadataJson === null) return undefined;
  try {
    const stubs = (JSON.parse(metadataJson) as { attachments?: unknown }).attachments;
    if (!Array.isArray(stubs)) return undefined;
    const stored = stubs.filter((stub) => typeof stub?.bytes === "number");
    const name = stored[position]?.name;
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}
