/**
 * `GET /api/events`: live events as Server-Sent Events.
 *
 * A stream wakes on the process's change feed (file events plus SQLite's
 * `data_version`, like a waiting `sync`), so it learns of a commit by any
 * process within milliseconds, and reads only what changed: new messages
 * by their global position, topic summaries of the topics they touched
 * (all topics when the topic list itself changed), and presence. Nothing
 * is polled on a timer; the only timers are the keep-alive comment (every
 * `AGENT_BUS_HTTP_KEEPALIVE_SECONDS`, 15 by default) and the
 * moment a present agent ages out or a wait ends.
 *
 * Events: `message` ({topic_id, message}), `topic` (a topic summary, or
 * `{topic_id, deleted: true}`), `presence` ({topic_id, agents}) and, when a
 * reconnect missed more than can be replayed, `reset` (reload everything).
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
import type { Bus } from "../bus/mod.ts";
import { MAX_TOPIC_LIST } from "../bus/topics.ts";
import { BusError } from "../errors.ts";

/** Most missed messages replayed after a reconnect; beyond that the client gets `reset`. */
export const MAX_REPLAY = 1000;
/** Messages read per wake-up. */
const BATCH = 500;

/** `GET /api/events`: which topic to follow, and where a reconnecting client left off. */
export const eventsQuery = z.strictObject({
  topic_id: z.string().min(1).max(64, "exceeds max length (64)").optional()
    .describe("Only this topic's events"),
  last_event_id: z.int().min(0, "must be an int >= 0").max(Number.MAX_SAFE_INTEGER).optional()
    .describe("Resume after this event id (or send Last-Event-ID)"),
});

/** Options of one event stream. */
export interface EventStreamOptions {
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
  const encoder = new TextEncoder();
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal.addEventListener("abort", abort, { once: true });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => controller.enqueue(encoder.encode(text));
      run(bus, options, send, stop.signal)
        .catch((error) => {
          if (!stop.signal.aborted) bus.log.warn("event stream failed", { error: String(error) });
        })
        .finally(() => {
          options.signal.removeEventListener("abort", abort);
          try {
            controller.close();
          } catch { /* already closed by the client */ }
        });
    },
    cancel() {
      stop.abort();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}

async function run(
  bus: Bus,
  options: EventStreamOptions,
  send: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const filter = options.topicId;
  const wanted = (topicId: string) => filter === undefined || topicId === filter;
  let position = latestPosition(bus);
  let lastSent = Date.now();
  const emit = (event: string, data: unknown) => {
    send(`id: ${position}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    lastSent = Date.now();
  };

  send("retry: 1000\n\n");
  const resumeFrom = options.lastEventId;
  if (resumeFrom !== undefined && resumeFrom < position) {
    const missed = messagesSincePosition(bus, resumeFrom, MAX_REPLAY + 1);
    if (missed.length > MAX_REPLAY) {
      emit("reset", { reason: `more than ${MAX_REPLAY} messages were missed` });
    } else {
      for (const { position: at, message } of missed) {
        if (!wanted(message.topic_id)) continue;
        position = at;
        emit("message", { topic_id: message.topic_id, message });
      }
      position = latestPosition(bus);
    }
  }

  let version = topicListVersion(bus);
  let topics = summariesById(bus);
  let presence = presenceByTopic(bus, filter);
  // A reconnect may have missed topic and presence changes: send the current state.
  if (resumeFrom !== undefined) {
    for (const topic of topics.values()) {
      if (wanted(topic.topic_id)) emit("topic", topic);
    }
    for (const [topicId, agents] of presence.agents) {
      emit("presence", { topic_id: topicId, agents });
    }
  }
  emit("ready", { last_event_id: position });

  while (!signal.aborted) {
    const mark = bus.changes.mark();
    // Messages since the last wake-up, in order.
    const touched = new Set<string>();
    for (;;) {
      const batch = messagesSincePosition(bus, position, BATCH);
      for (const { position: at, message } of batch) {
        position = at;
        touched.add(message.topic_id);
        if (wanted(message.topic_id)) emit("message", { topic_id: message.topic_id, message });
      }
      if (batch.length < BATCH) break;
    }
    // Topic summaries: all of them when the list changed, else the touched ones.
    const nextVersion = topicListVersion(bus);
    const changed: TopicSummary[] = [];
    if (nextVersion !== version) {
      const next = summariesById(bus);
      for (const [id, topic] of next) {
        if (!sameSummary(topics.get(id), topic)) changed.push(topic);
      }
      for (const id of topics.keys()) {
        if (!next.has(id) && wanted(id)) emit("topic", { topic_id: id, deleted: true });
      }
      topics = next;
      version = nextVersion;
    } else {
      for (const id of touched) {
        const topic = summaryIfExists(bus, id);
        if (!topic || sameSummary(topics.get(id), topic)) continue;
        topics.set(id, topic);
        changed.push(topic);
      }
    }
    for (const topic of changed) {
      if (wanted(topic.topic_id)) emit("topic", topic);
    }
    // Presence is read for the filtered topic only, so every change here is wanted.
    const nextPresence = presenceByTopic(bus, filter);
    for (const id of new Set([...presence.agents.keys(), ...nextPresence.agents.keys()])) {
      const agents = nextPresence.agents.get(id) ?? [];
      if (!sameAgents(presence.agents.get(id) ?? [], agents)) {
        emit("presence", { topic_id: id, agents });
      }
    }
    presence = nextPresence;

    const untilAging = presence.nextChangeAt === null
      ? Infinity
      : Math.max(50, (presence.nextChangeAt - bus.now()) * 1000 + 50);
    const outcome = await bus.changes.wait(mark, {
      timeoutMs: Math.min(options.keepAliveMs, untilAging),
      signal,
    }).catch(() => "stopped" as const);
    // Also when busy with other topics' commits that this stream filters out.
    if (outcome !== "stopped" && Date.now() - lastSent >= options.keepAliveMs - 50) {
      send(`: keep-alive\n\n`);
      lastSent = Date.now();
    }
  }
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
function presenceByTopic(bus: Bus, topicId: string | undefined): {
  agents: Map<string, Omit<PresentAgent, "age_seconds">[]>;
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

/** Same agents, each equally waiting or not (a presence refresh alone is no event). */
function sameAgents(
  a: Omit<PresentAgent, "age_seconds">[],
  b: Omit<PresentAgent, "age_seconds">[],
): boolean {
  const key = (agents: Omit<PresentAgent, "age_seconds">[]) =>
    agents.map((agent) => `${agent.agent_name}:${agent.waiting}`).sort().join("\n");
  return key(a) === key(b);
}
