/**
 * Who this MCP session is, per topic.
 *
 * The seed keeps identity in the server process's memory: after a restart a
 * client must `topic_join` again (with its reclaim token). One session holds
 * one name per topic; joining again under another name replaces it (the old
 * name stays reserved).
 *
 * @module
 */

import { BusError } from "../errors.ts";
import type { SessionRecord } from "./attendance.ts";

/** The name a session uses in one topic. */
export interface Identity {
  topicId: string;
  agentName: string;
  reclaimToken: string;
  /**
   * Where the next read may start scanning: the messages in
   * (cursor, ownThrough] are all this peer's own, which a read without
   * `include_self` leaves out anyway. Without it, a peer that only sends
   * would rescan its whole history on every call. Valid only while the
   * stored cursor is still `cursor`.
   */
  readHint?: { cursor: number; ownThrough: number };
  /**
   * How far a read went that could not be recorded (the write lock was held
   * by another process): the next write of this identity records it, and
   * reads start there meanwhile.
   */
  pendingCursor?: number;
  /**
   * The cursor this session's latest `sync` ended at: the next `sync` reads
   * what follows it together with its other reads, and keeps that read when
   * the stored cursor proves to be the same (on PostgreSQL, a round trip).
   */
  lastCursor?: number;
}

/** The chatbus agent a session authenticated as (`bus_connect`, `msg_wait`, `msg_edit`). */
export interface ChatAgent {
  agentId: string;
  token: string;
}

/**
 * What a session needs to carry on elsewhere as the same agent: its names
 * and their tokens, its chatbus agent, and its record in the register (so
 * that the record can be replaced). A resident bus hands it to the entry
 * whenever it changes; a new bus takes it back if the old one dies.
 */
export interface SessionState {
  identities: { topicId: string; agentName: string; reclaimToken: string }[];
  chatAgent?: ChatAgent | undefined;
  /** The session's record id (`bus_sessions`), if it has one. */
  record?: string | undefined;
}

/** Identities of one MCP session (one stdio process, or one HTTP session). */
export class Session {
  readonly #identities = new Map<string, Identity>();
  #chatAgent: ChatAgent | undefined;
  readonly #onChange: ((state: SessionState) => void) | undefined;
  /**
   * Reply tokens this session was given, by hash: the store keeps only hashes,
   * and a `msg_wait` that times out hands back the token it gave before.
   */
  readonly replyTokens = new Map<string, string>();
  /** The mail identity this session is bound to (mailbox and peer-bus servers), if any. */
  readonly agent: string | undefined;

  /** This session's entry in the register the hooks read (stdio servers only). */
  readonly record: SessionRecord | undefined;
  /** Where this session is served: the MCP endpoint's URL over HTTP, `stdio` over stdio. */
  readonly endpoint: string;

  /**
   * @param options `restore`: a state to carry on from (see
   *   {@linkcode SessionState}); `onChange`: told the state after each change
   */
  constructor(
    options: {
      agent?: string | undefined;
      record?: SessionRecord | undefined;
      endpoint?: string | undefined;
      restore?: SessionState | undefined;
      onChange?: ((state: SessionState) => void) | undefined;
    } = {},
  ) {
    this.agent = options.agent;
    this.record = options.record;
    this.endpoint = options.endpoint ?? "stdio";
    for (const identity of options.restore?.identities ?? []) {
      this.#identities.set(identity.topicId, { ...identity });
    }
    this.#chatAgent = options.restore?.chatAgent;
    this.#onChange = options.onChange;
  }

  /** The chatbus agent bound to this session, if any (later calls may omit credentials). */
  get chatAgent(): ChatAgent | undefined {
    return this.#chatAgent;
  }

  set chatAgent(agent: ChatAgent | undefined) {
    const same = agent?.agentId === this.#chatAgent?.agentId &&
      agent?.token === this.#chatAgent?.token;
    this.#chatAgent = agent;
    if (!same) this.#changed();
  }

  /** What another process needs to carry this session on. */
  state(): SessionState {
    return {
      identities: [...this.#identities.values()].map(({ topicId, agentName, reclaimToken }) => ({
        topicId,
        agentName,
        reclaimToken,
      })),
      chatAgent: this.#chatAgent,
      record: this.record?.id,
    };
  }

  #changed(): void {
    this.#onChange?.(this.state());
  }

  /** The identity held in this topic, if any. */
  get(topicId: string): Identity | undefined {
    return this.#identities.get(topicId);
  }

  /**
   * The identity held in this topic.
   *
   * @throws {BusError} `AGENT_NOT_JOINED`
   */
  require(topicId: string): Identity {
    const identity = this.#identities.get(topicId);
    if (!identity) {
      throw new BusError(
        "AGENT_NOT_JOINED",
        `Not joined to topic "${topicId}": call topic_join(agent_name=..., topic_id="${topicId}") first`,
        { context: { topic_id: topicId } },
      );
    }
    return identity;
  }

  /** Remember the identity a join established. */
  set(identity: Identity): void {
    const before = this.#identities.get(identity.topicId);
    this.#identities.set(identity.topicId, identity);
    if (before?.agentName !== identity.agentName || before.reclaimToken !== identity.reclaimToken) {
      this.#changed();
    }
  }
}
