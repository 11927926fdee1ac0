/**
 * Reading an AgentChatBus database (its own SQLite schema, read for this
 * from its TS server's `memoryStore.ts`) for `agent-bus db
 * import-agentchatbus`: threads with their creator from `thread_settings`,
 * messages a page at a time, their edits and reactions, agents and custom
 * templates. The file is opened read-only and never changed; a table an
 * older AgentChatBus did not have reads as empty.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { BusError } from "../../errors.ts";

/** A thread row of AgentChatBus, with its creator. */
export interface AcbThread {
  id: string;
  topic: string;
  status: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  summary: string | null;
  system_prompt: string | null;
  template_id: string | null;
  metadata: string | null;
  creator_admin_id: string | null;
  creator_admin_name: string | null;
}

/** A message row of AgentChatBus. */
export interface AcbMessage {
  id: string;
  thread_id: string;
  seq: number;
  priority: string;
  author: string;
  author_id: string | null;
  role: string;
  content: string;
  metadata: string | null;
  reply_to_msg_id: string | null;
  created_at: string;
  edited_at: string | null;
  edit_version: number | null;
}

/** An agent row of AgentChatBus (its token is stored in clear there). */
export interface AcbAgent {
  id: string;
  name: string;
  display_name: string | null;
  ide: string | null;
  model: string | null;
  description: string | null;
  last_heartbeat: string;
  last_activity: string | null;
  last_activity_time: string | null;
  capabilities: string | null;
  skills: string | null;
  token: string;
  emoji: string | null;
}

/** A reaction, an edit and a custom template of AgentChatBus. */
export interface AcbReaction {
  message_id: string;
  agent_id: string | null;
  reaction: string;
  created_at: string;
}
export interface AcbEdit {
  message_id: string;
  version: number;
  old_content: string;
  edited_by: string;
  created_at: string;
}
export interface AcbTemplate {
  id: string;
  name: string;
  description: string | null;
  system_prompt: string | null;
  default_metadata: string | null;
  created_at: string;
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = "SQLite format 3\u0000";

/** A row the import found wrong, named so a person can find it in the file. */
export interface RowRef {
  table: string;
  /** The row's id as the file holds it, or its rowid when the id itself is unusable. */
  id: unknown;
}

/** An open AgentChatBus database. */
export class AgentChatBusFile {
  readonly #db: DatabaseSync;
  readonly #tables: Set<string>;

  /**
   * Open `path` read-only: a regular file (never a FIFO, device or
   * directory, which could block or never end) that starts as a SQLite
   * database does and has AgentChatBus's threads and messages tables.
   *
   * @throws {BusError} `INVALID_ARGUMENT` otherwise
   */
  constructor(path: string) {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch (error) {
      throw new BusError("INVALID_ARGUMENT", `Cannot read ${path}: ${error}`);
    }
    if (!info.isFile) {
      throw new BusError(
        "INVALID_ARGUMENT",
        `${path} is not a regular file (a directory, pipe or device); give the path of an ` +
          "AgentChatBus database file",
      );
    }
    if (!startsAsSqlite(path)) {
      throw new BusError("INVALID_ARGUMENT", `${path} is not a SQLite database file`);
    }
    try {
      this.#db = new DatabaseSync(path, { readOnly: true });
      this.#tables = new Set(
        (this.#db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[]).map((row) => row.name),
      );
    } catch (error) {
      throw new BusError("INVALID_ARGUMENT", `Cannot open ${path}: ${error}`);
    }
    if (!this.#tables.has("threads") || !this.#tables.has("messages")) {
      this.#db.close();
      throw new BusError(
        "INVALID_ARGUMENT",
        `${path} is not an AgentChatBus database (it has no threads and messages tables)`,
      );
    }
  }

  /**
   * The first structural fault of the file that no single row shows: an id
   * used twice (threads, messages, an edit's version), a message whose
   * thread is missing or that has no seq to order it by. Undefined when
   * there is none.
   */
  structuralFault(): { row: RowRef; problem: string } | undefined {
    const first = (sql: string) =>
      this.#db.prepare(`${sql} LIMIT 1`).get() as
        | { id: unknown; n?: number }
        | undefined;
    const twiceThread = first(
      "SELECT id, COUNT(*) AS n FROM threads GROUP BY id HAVING COUNT(*) > 1",
    );
    if (twiceThread) {
      return { row: { table: "threads", id: twiceThread.id }, problem: "its id is used twice" };
    }
    const twiceMessage = first(
      "SELECT id, COUNT(*) AS n FROM messages GROUP BY id HAVING COUNT(*) > 1",
    );
    if (twiceMessage) {
      return {
        row: { table: "messages", id: twiceMessage.id },
        problem: `its id is used by ${twiceMessage.n} messages`,
      };
    }
    const orphan = first(
      `SELECT id FROM messages WHERE thread_id IS NULL
         OR thread_id NOT IN (SELECT id FROM threads WHERE id IS NOT NULL)`,
    );
    if (orphan) {
      return {
        row: { table: "messages", id: orphan.id },
        problem: "its thread is not in the file",
      };
    }
    const unordered = first(
      "SELECT id FROM messages WHERE typeof(seq) NOT IN ('integer', 'real')",
    );
    if (unordered) {
      return { row: { table: "messages", id: unordered.id }, problem: "its seq is not a number" };
    }
    if (this.#tables.has("message_edits")) {
      const twiceEdit = first(
        `SELECT message_id AS id FROM message_edits GROUP BY message_id, version
         HAVING COUNT(*) > 1`,
      );
      if (twiceEdit) {
        return {
          row: { table: "message_edits", id: twiceEdit.id },
          problem: "a version of this message's edits is there twice",
        };
      }
    }
    return undefined;
  }

  /** Every thread, oldest first, with its creator when `thread_settings` names one. */
  threads(): AcbThread[] {
    const creator = this.#tables.has("thread_settings")
      ? "s.creator_admin_id, s.creator_admin_name"
      : "NULL AS creator_admin_id, NULL AS creator_admin_name";
    const join = this.#tables.has("thread_settings")
      ? "LEFT JOIN thread_settings s ON s.thread_id = t.id"
      : "";
    return this.#db.prepare(
      `SELECT t.id, t.topic, t.status, t.created_at, t.updated_at, t.closed_at, t.summary,
         t.system_prompt, t.template_id, t.metadata, ${creator}
       FROM threads t ${join} ORDER BY t.created_at, t.id`,
    ).all() as unknown as AcbThread[];
  }

  /**
   * A thread's messages after `after` (a seq and an id: messages that share
   * a seq are all read, in id order), at most `limit`.
   */
  messages(threadId: string, after: MessageKey, limit: number): AcbMessage[] {
    return this.#db.prepare(
      `SELECT id, thread_id, seq, priority, author, author_id, role, content, metadata,
         reply_to_msg_id, created_at, edited_at, edit_version
       FROM messages WHERE thread_id = ? AND (seq > ? OR (seq = ? AND id > ?))
       ORDER BY seq, id LIMIT ?`,
    ).all(threadId, after.seq, after.seq, after.id, limit) as unknown as AcbMessage[];
  }

  /** The edits of these messages. */
  edits(messageIds: readonly string[]): AcbEdit[] {
    if (!this.#tables.has("message_edits") || messageIds.length === 0) return [];
    return this.#db.prepare(
      `SELECT message_id, version, old_content, edited_by, created_at FROM message_edits
       WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, version`,
    ).all(JSON.stringify(messageIds)) as unknown as AcbEdit[];
  }

  /** The reactions to these messages. */
  reactions(messageIds: readonly string[]): AcbReaction[] {
    if (!this.#tables.has("reactions") || messageIds.length === 0) return [];
    return this.#db.prepare(
      `SELECT message_id, agent_id, reaction, created_at FROM reactions
       WHERE message_id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(messageIds)) as unknown as AcbReaction[];
  }

  /** Every agent. */
  agents(): AcbAgent[] {
    if (!this.#tables.has("agents")) return [];
    return this.#db.prepare(
      `SELECT id, name, display_name, ide, model, description, last_heartbeat, last_activity,
         last_activity_time, capabilities, skills, token, emoji FROM agents ORDER BY id`,
    ).all() as unknown as AcbAgent[];
  }

  /** The custom templates (built-ins are agent-bus's own). */
  templates(): AcbTemplate[] {
    if (!this.#tables.has("templates")) return [];
    return this.#db.prepare(
      `SELECT id, name, description, system_prompt, default_metadata, created_at FROM templates
       WHERE is_builtin = 0 ORDER BY id`,
    ).all() as unknown as AcbTemplate[];
  }

  /** How many messages a thread holds. */
  messageCount(threadId: string): number {
    return Number(
      (this.#db.prepare("SELECT COUNT(*) AS n FROM messages WHERE thread_id = ?").get(threadId) as {
        n: number;
      }).n,
    );
  }

  close(): void {
    this.#db.close();
  }
}

/** Where a page of a thread's messages ends: the last message's seq and id. */
export interface MessageKey {
  seq: number;
  id: string;
}

/** Whether the file at `path` (a regular file) begins with SQLite's header. */
function startsAsSqlite(path: string): boolean {
  const file = Deno.openSync(path, { read: true });
  try {
    const head = new Uint8Array(SQLITE_HEADER.length);
    let read = 0;
    while (read < head.length) {
      const n = file.readSync(head.subarray(read));
      if (n === null) return false;
      read += n;
    }
    return new TextDecoder().decode(head) === SQLITE_HEADER;
  } finally {
    file.close();
  }
}
