/**
 * SQL for what the AgentChatBus dialect adds to a message
 * (`bus_chat_messages`: author, role, priority; edits, reactions,
 * attachments). Messages themselves are the bus's `messages` rows, so every
 * dialect reads one stream.
 *
 * @module
 */

import type { Store } from "../types.ts";
import type { MessageRow } from "../messages.ts";
import type { AgentRow } from "./agents.ts";

/** A message with what the chat dialect adds to it (defaults for messages of other dialects). */
export interface ChatMessageRow extends MessageRow {
  author_id: string | null;
  role: string;
  priority: string;
  edit_version: number;
  edited_at: number | null;
}

const CHAT_MESSAGE_SELECT = `SELECT m.*, c.author_id, COALESCE(c.role, 'user') AS role,
  COALESCE(c.priority, 'normal') AS priority, COALESCE(c.edit_version, 0) AS edit_version,
  c.edited_at FROM messages m LEFT JOIN bus_chat_messages c ON c.message_id = m.message_id`;

/** Store what the chat dialect adds to a message just inserted. */
export function insertChatExtras(
  store: Store,
  row: {
    message_id: string;
    author_id: string | null;
    role: string;
    priority: string;
    /** (An imported message may have been edited before.) */
    edit_version?: number;
    edited_at?: number | null;
  },
): void {
  store.stmt(
    `INSERT INTO bus_chat_messages (message_id, author_id, role, priority, edit_version, edited_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(
    row.message_id,
    row.author_id,
    row.role,
    row.priority,
    row.edit_version ?? 0,
    row.edited_at ?? null,
  );
}

/** One message with its extras. */
export function getChatMessage(store: Store, messageId: string): ChatMessageRow | undefined {
  return store.stmt(`${CHAT_MESSAGE_SELECT} WHERE m.message_id = ?`).get(messageId) as
    | ChatMessageRow
    | undefined;
}

/** The newest `limit` messages of a thread after `afterSeq`, oldest first. */
export function chatMessagesNewest(
  store: Store,
  { topicId, afterSeq, limit }: { topicId: string; afterSeq: number; limit: number },
): ChatMessageRow[] {
  return (store.stmt(
    `${CHAT_MESSAGE_SELECT} WHERE m.topic_id = ? AND m.seq > ? ORDER BY m.seq DESC LIMIT ?`,
  ).all<ChatMessageRow>(topicId, afterSeq, limit)).reverse();
}

/** Messages of a thread after `afterSeq`, oldest first, optionally of one priority. */
export function chatMessagesAfter(
  store: Store,
  { topicId, afterSeq, priority, limit }: {
    topicId: string;
    afterSeq: number;
    priority?: string | undefined;
    limit: number;
  },
): ChatMessageRow[] {
  if (priority === undefined) {
    return store.stmt(
      `${CHAT_MESSAGE_SELECT} WHERE m.topic_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
    ).all<ChatMessageRow>(topicId, afterSeq, limit);
  }
  return store.stmt(
    `${CHAT_MESSAGE_SELECT} WHERE m.topic_id = ? AND m.seq > ?
       AND COALESCE(c.priority, 'normal') = ? ORDER BY m.seq LIMIT ?`,
  ).all<ChatMessageRow>(topicId, afterSeq, priority, limit);
}

/** Replace a message's body, keeping the old one as edit `version`. */
export function recordEdit(
  store: Store,
  { messageId, oldContent, newContent, editedBy, version, now }: {
    messageId: string;
    oldContent: string;
    newContent: string;
    editedBy: string;
    version: number;
    now: number;
  },
): void {
  store.stmt(
    `INSERT INTO bus_message_edits (message_id, version, old_content, edited_by, created_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(messageId, version, oldContent, editedBy, now);
  store.stmt("UPDATE messages SET content_markdown = ? WHERE message_id = ?").run(
    newContent,
    messageId,
  );
  store.stmt(
    `INSERT INTO bus_chat_messages (message_id, author_id, role, priority, edit_version, edited_at)
     VALUES (?, NULL, 'user', 'normal', ?, ?)
     ON CONFLICT (message_id) DO UPDATE SET edit_version = excluded.edit_version,
       edited_at = excluded.edited_at`,
  ).run(messageId, version, now);
}

/** A row of `bus_message_edits`. */
export interface EditRow {
  message_id: string;
  version: number;
  old_content: string;
  edited_by: string;
  created_at: number;
}

/** Store an earlier version of a message as it was recorded elsewhere (an import). */
export function insertEdit(store: Store, row: EditRow): void {
  store.stmt(
    `INSERT OR IGNORE INTO bus_message_edits (message_id, version, old_content, edited_by, created_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(row.message_id, row.version, row.old_content, row.edited_by, row.created_at);
}

/** A message's edits, oldest first. */
export function editsOf(store: Store, messageId: string): EditRow[] {
  const sql = "SELECT * FROM bus_message_edits WHERE message_id = ? ORDER BY version";
  return store.stmt(sql).all<EditRow>(messageId);
}

/** A row of `bus_reactions`. */
export interface ReactionRow {
  message_id: string;
  agent_id: string;
  reaction: string;
  created_at: number;
}

/** Add a reaction; false when it was already there. */
export function addReaction(store: Store, row: ReactionRow): boolean {
  return Number(
    store.stmt(
      `INSERT OR IGNORE INTO bus_reactions (message_id, agent_id, reaction, created_at)
       VALUES (?, ?, ?, ?)`,
    ).run(row.message_id, row.agent_id, row.reaction, row.created_at).changes,
  ) > 0;
}

/** How many reactions a message has. */
export function reactionCount(store: Store, messageId: string): number {
  const sql = "SELECT count(*) AS n FROM bus_reactions WHERE message_id = ?";
  return Number(store.stmt(sql).get<{ n: number | bigint }>(messageId)!.n);
}

/** One reaction. */
export function getReaction(
  store: Store,
  { messageId, agentId, reaction }: { messageId: string; agentId: string; reaction: string },
): ReactionRow | undefined {
  return store.stmt(
    "SELECT * FROM bus_reactions WHERE message_id = ? AND agent_id = ? AND reaction = ?",
  ).get<ReactionRow>(messageId, agentId, reaction);
}

/** Remove a reaction; false when it was not there. */
export function removeReaction(
  store: Store,
  { messageId, agentId, reaction }: { messageId: string; agentId: string; reaction: string },
): boolean {
  return Number(
    store.stmt("DELETE FROM bus_reactions WHERE message_id = ? AND agent_id = ? AND reaction = ?")
      .run(messageId, agentId, reaction).changes,
  ) > 0;
}

/** The reactions of these messages, in the order they were made. */
export function reactionsOf(store: Store, messageIds: readonly string[]): ReactionRow[] {
  if (messageIds.length === 0) return [];
  return store.stmt(REACTIONS_SQL).all<ReactionRow>(JSON.stringify(messageIds));
}

const REACTIONS_SQL =
  `SELECT * FROM bus_reactions WHERE message_id IN (SELECT value FROM json_each(?))
  ORDER BY created_at, agent_id, reaction`;

/** What the chat dialect added to a message (a row of `bus_chat_messages`). */
export interface ChatExtrasRow {
  message_id: string;
  author_id: string | null;
  role: string;
  priority: string;
  edit_version: number;
  edited_at: number | null;
}

/** The chat extras of these messages (only those that have some). */
export function chatExtrasOf(store: Store, messageIds: readonly string[]): ChatExtrasRow[] {
  if (messageIds.length === 0) return [];
  return store.stmt(
    "SELECT * FROM bus_chat_messages WHERE message_id IN (SELECT value FROM json_each(?))",
  ).all<ChatExtrasRow>(JSON.stringify(messageIds));
}

/** The attachments of these messages without their data: position and type. */
export function attachmentTypesOf(
  store: Store,
  messageIds: readonly string[],
): Omit<AttachmentRow, "data">[] {
  if (messageIds.length === 0) return [];
  return store.stmt(
    `SELECT message_id, position, mime_type FROM bus_attachments
     WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, position`,
  ).all<Omit<AttachmentRow, "data">>(JSON.stringify(messageIds));
}

/** One attachment. */
export function getAttachment(
  store: Store,
  { messageId, position }: { messageId: string; position: number },
): AttachmentRow | undefined {
  const sql = "SELECT * FROM bus_attachments WHERE message_id = ? AND position = ?";
  return store.stmt(sql).get<AttachmentRow>(messageId, position);
}

/** A row of `bus_attachments`: one image, base64. */
export interface AttachmentRow {
  message_id: string;
  position: number;
  mime_type: string;
  data: string;
}

/** Store a message's attachment. */
export function insertAttachment(store: Store, row: AttachmentRow): void {
  store.stmt(
    "INSERT INTO bus_attachments (message_id, position, mime_type, data) VALUES (?, ?, ?, ?)",
  ).run(row.message_id, row.position, row.mime_type, row.data);
}

/** What a listing shows beside its messages. */
export interface MessageExtras {
  reactions: ReactionRow[];
  /** Empty unless asked for. */
  attachments: AttachmentRow[];
  /** The agents among the authors. */
  authors: AgentRow[];
}

/**
 * The reactions, attachments (when `withAttachments`) and author agents of
 * `messageIds`, read at once (one round trip on PostgreSQL).
 */
export function readMessageExtras(
  store: Store,
  { messageIds, authorIds, withAttachments }: {
    messageIds: readonly string[];
    authorIds: readonly string[];
    withAttachments: boolean;
  },
): MessageExtras {
  if (messageIds.length === 0) return { reactions: [], attachments: [], authors: [] };
  const ids = JSON.stringify(messageIds);
  const [reactions, authors, attachments] = store.gather([
    { sql: REACTIONS_SQL, params: [ids] },
    {
      sql: "SELECT * FROM bus_agents WHERE agent_id IN (SELECT value FROM json_each(?))",
      params: [JSON.stringify(authorIds)],
    },
    ...(withAttachments
      ? [{
        sql: `SELECT * FROM bus_attachments WHERE message_id IN (SELECT value FROM json_each(?))
              ORDER BY message_id, position`,
        params: [ids],
      }]
      : []),
  ]);
  return {
    reactions: reactions as unknown as ReactionRow[],
    attachments: (attachments ?? []) as unknown as AttachmentRow[],
    authors: authors as unknown as AgentRow[],
  };
}

/** Registered agents that posted in a thread (at most `limit`). */
export function threadAuthorIds(store: Store, topicId: string, limit: number): string[] {
  return (store.stmt(
    `SELECT DISTINCT c.author_id AS agent_id FROM messages m
     JOIN bus_chat_messages c ON c.message_id = m.message_id
     WHERE m.topic_id = ? AND c.author_id IS NOT NULL LIMIT ?`,
  ).all<{ agent_id: string }>(topicId, limit)).map((row) => row.agent_id);
}
