/**
 * The session register: a stdio server writes down who its session is, so
 * that the client's hooks (`agent-bus hook`, separate processes started by
 * the same client) can tell what is unread for *this* agent.
 *
 * A record holds the host, the server's pid, its parent's pid (the client
 * that started it), its working directory, its profile and mail or role
 * name; the topics it joins and the questions it asks are added inside the
 * transactions that join and ask. The record goes when the server stops; a
 * hook ignores (and removes) the record of a server that died without
 * stopping. Recording never fails a tool call: a server that cannot record
 * itself (an HTTP session, a store error) simply has no record.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import {
  deleteSession,
  forgetSessionQuestion,
  insertSession,
  recordSessionQuestion,
  recordSessionTopic,
} from "../store/sessions.ts";
import type { Store } from "../store/mod.ts";
import { newId } from "./ids.ts";
import { type Bus, write } from "./mod.ts";

/** Where this process runs: what a hook compares with its own. */
export interface ProcessPlace {
  host: string;
  pid: number;
  parentPid: number;
  cwd: string;
}

/** This process's place; a fact that cannot be read is left empty. */
export function processPlace(): ProcessPlace {
  const attempt = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch {
      return fallback;
    }
  };
  return {
    host: attempt(() => Deno.hostname(), ""),
    pid: Deno.pid,
    parentPid: attempt(() => Deno.ppid, 0),
    cwd: attempt(() => Deno.cwd(), ""),
  };
}

/** One server's entry in the register. */
export class SessionRecord {
  /** The record's id (`bus_sessions.session_id`). */
  readonly id: string;
  readonly #bus: Bus;

  private constructor(bus: Bus, id: string) {
    this.#bus = bus;
    this.id = id;
  }

  /**
   * Record this server's session.
   *
   * @returns the record, or undefined when it could not be written (logged)
   */
  static async open(
    bus: Bus,
    session: { profile: string; agent: string | undefined; place?: ProcessPlace },
  ): Promise<SessionRecord | undefined> {
    const place = session.place ?? processPlace();
    const id = newId();
    try {
      await write(bus, () =>
        insertSession(bus.store, {
          session_id: id,
          host: place.host,
          server_pid: place.pid,
          client_pid: place.parentPid,
          cwd: place.cwd,
          profile: session.profile,
          agent: session.agent ?? null,
          started_at: bus.now(),
        }));
      return new SessionRecord(bus, id);
    } catch (error) {
      bus.log.warn("Could not record this session for the hooks", { error: String(error) });
      return undefined;
    }
  }

  /** Record the name held in a topic. Call inside the join's write transaction. */
  joined(store: Store, topicId: string, agentName: string): void {
    recordSessionTopic(store, { session_id: this.id, topic_id: topicId, agent_name: agentName });
  }

  /** Record a question asked. Call inside the ask's write transaction. */
  asked(store: Store, questionId: string): void {
    recordSessionQuestion(store, this.id, questionId);
  }

  /** The settled question's outcome was handed to the agent: it is no longer unread. */
  async seen(questionId: string, log: Logger): Promise<void> {
    await write(this.#bus, () => forgetSessionQuestion(this.#bus.store, this.id, questionId))
      .catch((error) => log.warn("Could not update the session record", { error: String(error) }));
  }

  /** Remove the record (the server is stopping). */
  async close(): Promise<void> {
    await write(this.#bus, () => deleteSession(this.#bus.store, this.id)).catch(() => {});
  }
}
