/**
 * `GET /api/events`: live events as Server-Sent Events.
 *
 * One {@linkcode EventHub} per process reads what changed and fans it out to
 * every open stream, so a hundred open tabs cost the database what one does.
 * The hub wakes on the process's change feed (file events plus SQLite's
 * `data_version`, like a waiting `sync`), so it learns of a commit by any
 * process within milliseconds, and reads only what changed: new messages
 * by their global position, topic summaries of the topics they touched
 * (all topics when the topic list itself changed), and presence: topics and
 * presence first, then the messages, so that a summary never counts a
 * message the streams were not sent. It runs only while a stream is open.
 * The timers are each stream's keep-alive comment (every
 * `AGENT_BUS_HTTP_KEEPALIVE_SECONDS`, 15 by default), the moment a present
 * agent ages out or a wait ends, and, on PostgreSQL, a look every
 * {@linkcode RECHECK_MS} without a commit (a lost notification must not
 * lose a message for good).
 *
 * Events: `message` ({topic_id, message}), `topic` (a topic summary, or
 * `{topic_id, deleted: true}`), `presence` ({topic_id, agents}) and, when a
 * reconnect missed more than can be replayed, `reset` (reload everything).
 * The hub also reads the AgentChatBus dialect's journal (edits, reactions,
 * agents' changes) for AgentChatBus's `/events` stream, and hands each
 * topic and presence change on with what it replaces, so that stream can
 * name the change as AgentChatBus does.
 * A message whose metadata names a `handoff_target` or a `stop_reason` is
 * followed by the event seed 002 names for it: `msg.handoff` ({topic_id,
 * msg_id, seq, from, to}) or `msg.stop` ({topic_id, msg_id, seq, author,
 * reason}).
 * Every event's `id` is the position of the newest message sent so far, so
 * a client that reconnects with `Last-Event-ID` gets every message it
 * missed, then the current topics and presence.
 *
 * @module
 */

import { z } from "zod";
import {
  latestPosition,
  messagesSincePosition,
  presenceOverview,
  type PresentAgent,
  topicListVersion,
  topicSummaries,
  type TopicSummary,
  topicSummary,
} from "../bus/admin.ts";
import type { Message } from "../bus/messages.ts";
import type { Bus } from "../bus/mod.ts";
import { MAX_TOPIC_LIST } from "../bus/topics.ts";
import { onEachChange } from "../bus/waiting.ts";
import { chatEventsSince, latestChatEventPosition } from "../bus/chat/journal.ts";
import { BusError } from "../errors.ts";
import { boundedEventBody } from "../sse_body.ts";

/** Most missed messages replayed after a reconnect; beyond that the client gets `reset`. */
export const MAX_REPLAY = 1000;
/** Messages read per wake-up. */
const BATCH = 500;
/** Longest the hub goes without reading on a store that pushes commits (one cheap read). */
const RECHECK_MS = 5000;

/** `GET /api/events`: which topic to follow, and where a reconnecting client left off. */
export const eventsQuery = z.strictObject({
  topic_id: z.string().min(1).max(64, "exceeds max length (64)").optional()
    .describe("Only this topic's events"),
  last_event_id: z.int().min(0, "must be an int >= 0").max(Number.MAX_SAFE_INTEGER).optional()
    .describe("Resume after this event id (or send Last-Event-ID)"),
});

/** One change, as the hub hands it to every stream. */
export interface HubEvent {
  /**
   * What changed; `chat` is a row of the AgentChatBus dialect's journal (an
   * edit, a reaction, an agent's change: `/events` only).
   */
  event: "message" | "topic" | "presence" | "msg.handoff" | "msg.stop" | "chat";
  /** The topic it concerns (streams filter on it); "" for none. */
  topicId: string;
  /** The message's global position (`message` events only). */
  position?: number;
  data: unknown;
  /**
   * What it replaces (`topic` and `presence` events): the topic's summary or
   * the topic's present agents before; undefined for a topic that is new.
   */
  previous?: unknown;
}

type Agents = Omit<PresentAgent, "age_seconds">[];

/**
 * The one reader of changes in a process, shared by every event stream.
 * It runs while at least one stream subscribes.
 */
export class EventHub {
  readonly #bus: Bus;
  readonly #subscribers = new Set<(event: HubEvent) => void>();
  #stop: AbortController | undefined;

  constructor(bus: Bus) {
    this.#bus = bus;
  }

  /** Number of streams listening. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /**
   * Receive every change from now on (with a position after the current
   * one, for messages).
   *
   * @returns a function that stops the subscription
   */
  subscribe(listener: (event: HubEvent) => void): () => void {
    this.#subscribers.add(listener);
    if (!this.#stop) {
      const stop = new AbortController();
      this.#stop = stop;
      this.#run(stop.signal).catch((error) => {
        if (!stop.signal.aborted) this.#bus.log.warn("event hub failed", { error: String(error) });
      }).finally(() => {
        if (this.#stop === stop) this.#stop = undefined;
      });
    }
    return () => {
      this.#subscribers.delete(listener);
      if (this.#subscribers.size === 0) {
        this.#stop?.abort();
        this.#stop = undefined;
      }
    };
  }

  /** Stop reading (server shutdown). */
  close(): void {
    this.#subscribers.clear();
    this.#stop?.abort();
    this.#stop = undefined;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const bus = this.#bus;
    const seen: Seen = {
      position: latestPosition(bus),
      chatPosition: latestChatEventPosition(bus),
      version: topicListVersion(bus),
      topics: summariesById(bus),
      presence: presenceByTopic(bus),
    };
    // A store that pushes commits is looked at again after RECHECK_MS without one all the same:
    // a wake-up its database never delivered costs seconds, not the message.
    const quiet = bus.store.subscribe ? RECHECK_MS : 60_000;
    const untilAging = () =>
      seen.presence.nextChangeAt === null
        ? quiet
        : Math.min(quiet, Math.max(50, (seen.presence.nextChangeAt - bus.now()) * 1000 + 50));
    await onEachChange(bus, { signal, idleMs: untilAging }, () => {
      // Topics and presence are read before the messages: the messages' read is then at least
      // as new, so no topic summary ever counts a message this step did not send (a commit
      // that lands in between is sent now, and its summary follows on the next wake-up).
      const version = topicListVersion(bus);
      const listed = version !== seen.version ? summariesById(bus) : undefined;
      const presence = presenceByTopic(bus);
      const touched = this.#publishMessages(seen);
      this.#publishChatEvents(seen);
      if (listed) {
        this.#publishTopicList(seen, listed);
        seen.version = version;
      } else this.#publishTouchedTopics(seen, touched);
      this.#publishPresence(seen, presence);
      return undefined;
    });
  }

  #publish(event: HubEvent): void {
    for (const listener of [...this.#subscribers]) listener(event);
  }

  /** The messages since the last wake-up, in order: the topics they touched. */
  #publishMessages(seen: Seen): Set<string> {
    const touched = new Set<string>();
    for (;;) {
      const batch = messagesSincePosition(this.#bus, seen.position, BATCH);
      for (const { position: at, message } of batch) {
        seen.position = at;
        touched.add(message.topic_id);
        this.#publish({
          event: "message",
          topicId: message.topic_id,
          position: at,
          data: { topic_id: message.topic_id, message },
        });
        for (const signal of signalsOf(message)) {
          this.#publish({ ...signal, topicId: message.topic_id });
        }
      }
      if (batch.length < BATCH) return touched;
    }
  }

  /** The AgentChatBus dialect's journal since the last wake-up. */
  #publishChatEvents(seen: Seen): void {
    for (;;) {
      const batch = chatEventsSince(this.#bus, seen.chatPosition, BATCH);
      for (const row of batch) {
        seen.chatPosition = row.position;
        this.#publish({ event: "chat", topicId: row.topic_id ?? "", data: row });
      }
      if (batch.length < BATCH) return;
    }
  }

  /** The list of topics changed: every summary that differs, and the topics deleted. */
  #publishTopicList(seen: Seen, listed: Map<string, TopicSummary>): void {
    for (const [id, topic] of listed) {
      const previous = seen.topics.get(id);
      if (!sameSummary(previous, topic)) {
        this.#publish({ event: "topic", topicId: id, data: topic, previous });
      }
    }
    for (const id of seen.topics.keys()) {
      if (!listed.has(id)) {
        this.#publish({ event: "topic", topicId: id, data: { topic_id: id, deleted: true } });
      }
    }
    seen.topics = listed;
  }

  /** The summaries of the topics new messages touched. */
  #publishTouchedTopics(seen: Seen, touched: Set<string>): void {
    for (const id of touched) {
      const topic = summaryIfExists(this.#bus, id);
      const previous = seen.topics.get(id);
      if (!topic || sameSummary(previous, topic)) continue;
      seen.topics.set(id, topic);
      // (No topic is new here: a new one moves the list's version. One the list left out
      // is not new either: it stands for itself.)
      this.#publish({ event: "topic", topicId: id, data: topic, previous: previous ?? topic });
    }
  }

  /** Each topic whose present agents changed. */
  #publishPresence(seen: Seen, presence: Seen["presence"]): void {
    for (const id of new Set([...seen.presence.agents.keys(), ...presence.agents.keys()])) {
      const agents = presence.agents.get(id) ?? [];
      const previous = seen.presence.agents.get(id) ?? [];
      if (!sameAgents(previous, agents)) {
        this.#publish({ event: "presence", topicId: id, data: { topic_id: id, agents }, previous });
      }
    }
    seen.presence = presence;
  }
}

/** What the hub has published up to: positions, the topic list and presence. */
interface Seen {
  position: number;
  chatPosition: number;
  version: number;
  topics: Map<string, TopicSummary>;
  presence: ReturnType<typeof presenceByTopic>;
}

/** Options of one event stream. */
export interface EventStreamOptions {
  /** The process's hub. */
  hub: EventHub;
  /** Only this topic's events. */
  topicId?: string | undefined;
  /** The last event id the client saw (from `Last-Event-ID` or `?last_event_id=`). */
  lastEventId?: number | undefined;
  /** How often an idle stream sends a comment, so proxies and browsers keep it open. */
  keepAliveMs: number;
  /** Ends the stream (server shutdown). */
  signal: AbortSignal;
}

/** Open an SSE stream of the bus's events. */
export function eventStream(bus: Bus, options: EventStreamOptions): Response {
  return sseResponse(options.signal, (send) => follow(bus, options, send), FELL_BEHIND);
}

/**
 * A Server-Sent Events response fed by `open`, which gets a writer and
 * returns the function that stops feeding it: called when the client goes
 * (the stream cancelled), when it falls `MAX_QUEUED_EVENT_BYTES`
 * (`lib/sse_body.ts`) behind (it is sent `farewell` and the stream ends: it reconnects and
 * catches up by its last event id, never held in memory), or when `signal`
 * aborts (the server stops; the stream is then ended, and what it held dropped).
 */
export function sseResponse(
  signal: AbortSignal,
  open: (send: (text: string) => void) => () => void,
  farewell: string,
): Response {
  // (The stream may end while `open` still runs: then it is stopped as soon as it returns.)
  const feeding: { stop?: () => void; ended: boolean } = { ended: false };
  const onAbort = () => stream.abort();
  const stream = boundedEventBody({
    farewell,
    onEnd: () => {
      feeding.ended = true;
      signal.removeEventListener("abort", onAbort);
      feeding.stop?.();
    },
  });
  feeding.stop = open((text) => void stream.write(text));
  if (feeding.ended) feeding.stop();
  else signal.addEventListener("abort", onAbort, { once: true });
  return new Response(stream.body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}

/** The last event of a console stream whose client fell behind: reload, then reconnect. */
const FELL_BEHIND = `event: reset\ndata: ${
  JSON.stringify({ reason: "the client fell behind; reconnect with Last-Event-ID" })
}\n\n`;

/**
 * Feed one stream: subscribe to the hub (buffering), replay what a
 * reconnecting client missed, send `ready`, then pass on the hub's events
 * for the wanted topic, with a keep-alive comment when idle.
 *
 * @returns a function that stops feeding the stream
 */
function follow(
  bus: Bus,
  options: EventStreamOptions,
  send: (text: string) => void,
): () => void {
  const filter = options.topicId;
  const wanted = (topicId: string) => filter === undefined || topicId === filter;
  let position = latestPosition(bus);
  let lastSent = Date.now();
  const emit = (event: string, data: unknown) => {
    send(`id: ${position}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    lastSent = Date.now();
  };
  // Subscribed before the replay is read: what arrives meanwhile is held, then sent once.
  let held: HubEvent[] | undefined = [];
  const deliver = (change: HubEvent) => {
    if (change.event === "chat") return; // (AgentChatBus's stream tells these)
    if (change.position !== undefined) {
      if (change.position <= position) return; // already replayed
      position = change.position;
    }
    if (wanted(change.topicId)) emit(change.event, change.data);
  };
  const unsubscribe = options.hub.subscribe((change) => {
    if (held) held.push(change);
    else deliver(change);
  });

  send("retry: 1000\n\n");
  const resumeFrom = options.lastEventId;
  if (resumeFrom !== undefined && resumeFrom < position) {
    const missed = messagesSincePosition(bus, resumeFrom, MAX_REPLAY + 1);
    if (missed.length > MAX_REPLAY) {
      emit("reset", { reason: `more than ${MAX_REPLAY} messages were missed` });
    } else {
      const upTo = position;
      position = resumeFrom;
      for (const { position: at, message } of missed) {
        if (at > upTo) break;
        position = at;
        if (!wanted(message.topic_id)) continue;
        emit("message", { topic_id: message.topic_id, message });
        for (const signal of signalsOf(message)) emit(signal.event, signal.data);
      }
      position = upTo;
    }
    // A reconnect may have missed topic and presence changes: send the current state.
    for (const topic of summariesById(bus).values()) {
      if (wanted(topic.topic_id)) emit("topic", topic);
    }
    for (const [topicId, agents] of presenceByTopic(bus, filter).agents) {
      emit("presence", { topic_id: topicId, agents });
    }
  }
  emit("ready", { last_event_id: position });
  for (const change of held) deliver(change);
  held = undefined;

  // One timer, due when the stream will have been quiet for keepAliveMs.
  let keepAlive: ReturnType<typeof setTimeout> | undefined;
  const scheduleKeepAlive = (): void => {
    const due = lastSent + options.keepAliveMs - Date.now();
    keepAlive = setTimeout(() => {
      if (Date.now() - lastSent >= options.keepAliveMs - 50) {
        send(`: keep-alive\n\n`);
        lastSent = Date.now();
      }
      scheduleKeepAlive();
    }, Math.max(50, due));
  };
  scheduleKeepAlive();
  return () => {
    clearTimeout(keepAlive);
    unsubscribe();
  };
}

function sameSummary(a: TopicSummary | undefined, b: TopicSummary): boolean {
  return a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

/** A topic's summary, or undefined when it was deleted meanwhile (the list version says so next). */
function summaryIfExists(bus: Bus, topicId: string): TopicSummary | undefined {
  try {
    return topicSummary(bus, topicId);
  } catch (error) {
    if (error instanceof BusError && error.code === "TOPIC_NOT_FOUND") return undefined;
    throw error;
  }
}

function summariesById(bus: Bus): Map<string, TopicSummary> {
  return new Map(
    topicSummaries(bus, { status: "all", limit: MAX_TOPIC_LIST }).map((t) => [t.topic_id, t]),
  );
}

/** Present agents per topic, without the ever-changing ages (compared between wake-ups). */
function presenceByTopic(bus: Bus, topicId?: string): {
  agents: Map<string, Agents>;
  nextChangeAt: number | null;
} {
  const overview = presenceOverview(bus, topicId === undefined ? {} : { topicId });
  return {
    agents: new Map(
      Object.entries(overview.topics).map((
        [id, agents],
      ) => [id, agents.map(({ age_seconds: _, ...agent }) => agent)]),
    ),
    nextChangeAt: overview.next_change_at,
  };
}

/** Same agents, each equally waiting and typing or not (a presence refresh alone is no event). */
function sameAgents(a: Agents, b: Agents): boolean {
  const key = (agents: Agents) =>
    agents.map((agent) => `${agent.agent_name}:${agent.waiting}:${agent.typing}`).sort().join("\n");
  return key(a) === key(b);
}

/** The named events a message triggers (seed 002): a handoff and a stop, from its metadata. */
function signalsOf(message: Message): { event: "msg.handoff" | "msg.stop"; data: unknown }[] {
  const metadata = message.metadata;
  if (metadata === null) return [];
  const signals: { event: "msg.handoff" | "msg.stop"; data: unknown }[] = [];
  const base = { topic_id: message.topic_id, msg_id: message.message_id, seq: message.seq };
  if (typeof metadata.handoff_target === "string") {
    signals.push({
      event: "msg.handoff",
      data: { ...base, from: message.sender, to: metadata.handoff_target },
    });
  }
  if (typeof metadata.stop_reason === "string") {
    signals.push({
      event: "msg.stop",
      data: { ...base, author: message.sender, reason: metadata.stop_reason },
    });
  }
  return signals;
}
