/**
 * The session register: a stdio server writes down who its session is, so
 * that the client's hooks (`agent-bus hook`, separate processes started by
 * the same client) can tell what is unread for *this* agent.
 *
 * A record holds the host, the server's pid, its parent's pid (the client
 * that started it), its working directory, its profile and mail or role
 * name; the topics it joins and the questions it asks are added inside the
 * transactions that join and ask. The record goes when the server stops.
 * A server that died without stopping leaves it, and whoever notices first
 * removes it: on its host, a hook (the pid is gone, or now another
 * process's); on any host, every server, which refreshes its own record
 * every {@linkcode SESSION_REFRESH_SECONDS} and removes those not refreshed
 * for {@linkcode SESSION_EXPIRY_SECONDS} (when it starts, and at each
 * refresh). Recording never fails a tool call: a server that cannot record
 * itself (an HTTP session, a store error) simply has no record.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import {
  deleteSession,
  forgetExpiredSessions,
  forgetSessionQuestion,
  insertSession,
  recordSessionQuestion,
  recordSessionTopic,
  touchSession,
} from "../store/sessions.ts";
import type { Store } from "../store/mod.ts";
import { newId } from "./ids.ts";
import { type Bus, write } from "./mod.ts";
import type { SessionState } from "./session.ts";
import { type ProcessPlace, processPlace } from "./place.ts";

/** How often a running server says so in its record. */
export const SESSION_REFRESH_SECONDS = 60;
/** A record not refreshed for this long belongs to a server that is gone. */
export const SESSION_EXPIRY_SECONDS = 5 * SESSION_REFRESH_SECONDS;

export { type ProcessPlace, processPlace } from "./place.ts";

/** One server's entry in the register. */
export class SessionRecord {
  /** The record's id (`bus_sessions.session_id`). */
  readonly id: string;
  readonly #bus: Bus;
  readonly #refresh: ReturnType<typeof setInterval>;

  private constructor(bus: Bus, id: string) {
    this.#bus = bus;
    this.id = id;
    this.#refresh = setInterval(() => void this.#touch(), SESSION_REFRESH_SECONDS * 1000);
    Deno.unrefTimer(this.#refresh);
  }

  /** Say this server still runs, and remove the records of servers that stopped saying so. */
  async #touch(): Promise<void> {
    const now = this.#bus.now();
    await write(this.#bus, () => {
      touchSession(this.#bus.store, this.id, now);
      forgetExpiredSessions(this.#bus.store, now - SESSION_EXPIRY_SECONDS);
    }).catch((error) =>
      this.#bus.log.warn("Could not refresh this session's record", { error: String(error) })
    );
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
      await write(bus, () => {
        const now = bus.now();
        forgetExpiredSessions(bus.store, now - SESSION_EXPIRY_SECONDS);
        insertSession(bus.store, {
          session_id: id,
          host: place.host,
          server_pid: place.pid,
          client_pid: place.parentPid,
          cwd: place.cwd,
          profile: session.profile,
          agent: session.agent ?? null,
          started_at: now,
          seen_at: now,
        });
      });
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

  /**
   * Carry on a session from a bus that died: its names go into this record,
   * and its old record goes.
   */
  async adopt(previous: SessionState): Promise<void> {
    await write(this.#bus, () => {
      for (const identity of previous.identities) {
        this.joined(this.#bus.store, identity.topicId, identity.agentName);
      }
      if (previous.record && previous.record !== this.id) {
        deleteSession(this.#bus.store, previous.record);
      }
    }).catch((error) =>
      this.#bus.log.warn("Could not carry the session's record on", { error: String(error) })
    );
  }

  /** Remove the record (the server is stopping). */
  async close(): Promise<void> {
    clearInterval(this.#refresh);
    await write(this.#bus, () => deleteSession(this.#bus.store, this.id)).catch(() => {});
  }
}
