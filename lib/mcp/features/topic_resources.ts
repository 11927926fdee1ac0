/**
 * Topics as MCP resources (the peer profile): `topic://{topic_id}` is a
 * topic's transcript, its latest messages as Markdown.
 *
 * A client that subscribes to a topic hears `notifications/resources/updated`
 * when a message arrives there; a client that has listed the resources hears
 * `notifications/resources/list_changed` when a topic is created, closed,
 * renamed or deleted. One watch per server, on the process's change feed (no
 * polling, a wake-up within milliseconds of another process's commit),
 * started by the first list or subscription: a client that never asks costs
 * nothing.
 *
 * @module
 */

import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "../_sdk.ts";
import { findTopic, latestMessages, topicLatestSeq, topicSummaries } from "../../bus/admin.ts";
import { exportMarkdown } from "../../bus/export.ts";
import type { Bus } from "../../bus/mod.ts";
import { listTopics, MAX_TOPIC_LIST } from "../../bus/topics.ts";
import { onEachChange } from "../../bus/waiting.ts";
import { BusError } from "../../errors.ts";
import { known, unknownResource } from "../invalid_params.ts";
import type { ProtocolServer } from "../protocol_server.ts";
import type { Feature } from "./mod.ts";

/** The capabilities {@linkcode attachTopicResources} serves. */
export const TOPIC_CAPABILITIES = { resources: { subscribe: true, listChanged: true } };

/** Messages in a transcript resource (the latest). */
const TRANSCRIPT_MESSAGES = 100;
/** Topics in `resources/list` (open ones, most recently active first). */
const LISTED_TOPICS = 100;
const TOPIC_URI = /^topic:\/\/([0-9A-Za-z_-]{1,64})$/;

/**
 * Serve topics as resources on `server`.
 *
 * @returns a function that stops the watch
 */
export function attachTopicResources(server: ProtocolServer, bus: Bus): () => void {
  const resources = new TopicResources(server, bus);
  return () => resources.stop();
}

/** One connection's topic resources, and the watch that announces their changes. */
class TopicResources {
  readonly #server: ProtocolServer;
  readonly #bus: Bus;
  /** Subscribed topic → the last seq announced. */
  readonly #subscribed = new Map<string, number>();
  /** The open topics when the client last listed them (see {@linkcode openTopicsSignature}). */
  #listed: string | undefined;
  readonly #controller = new AbortController();
  #watching = false;

  constructor(server: ProtocolServer, bus: Bus) {
    this.#server = server;
    this.#bus = bus;
    server.setRequestHandler(ListResourcesRequestSchema, () => this.#list());
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [{
        uriTemplate: "topic://{topic_id}",
        name: `A topic's transcript (its latest ${TRANSCRIPT_MESSAGES} messages)`,
        mimeType: "text/markdown",
      }],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => {
      const uri = request.params.uri;
      const topicId = topicOf(uri);
      const topic = known(() => findTopic(bus, topicId));
      const text = exportMarkdown(topic, latestMessages(bus, topic.topic_id, TRANSCRIPT_MESSAGES));
      return { contents: [{ uri, mimeType: "text/markdown", text }] };
    });
    server.setRequestHandler(SubscribeRequestSchema, (request) => {
      const topicId = topicOf(request.params.uri);
      this.#subscribed.set(topicId, known(() => topicLatestSeq(bus, topicId)));
      this.#watch();
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      this.#subscribed.delete(topicOf(request.params.uri));
      return {};
    });
  }

  /** Stop the watch. */
  stop(): void {
    this.#controller.abort();
  }

  #list() {
    const topics = topicSummaries(this.#bus, {
      status: "open",
      sort: "activity",
      limit: LISTED_TOPICS,
    });
    this.#listed = openTopicsSignature(this.#bus);
    this.#watch();
    return {
      resources: topics.map((t) => ({
        uri: `topic://${t.topic_id}`,
        name: t.name,
        description: `Topic "${t.name}": ${t.messages} message(s); its latest messages`,
        mimeType: "text/markdown",
      })),
    };
  }

  /** Started by the first list or subscription; runs until stopped. */
  #watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    onEachChange(this.#bus, { signal: this.#controller.signal }, async () => {
      await this.#announceChanges();
      return undefined;
    }).catch((error) => this.#bus.log.warn("The topic watch stopped", { error: String(error) }));
  }

  /** After a change: an update for each subscribed topic that moved, and the list if it changed. */
  async #announceChanges(): Promise<void> {
    for (const [topicId, announced] of this.#subscribed) {
      let latest: number;
      try {
        latest = topicLatestSeq(this.#bus, topicId);
      } catch (error) {
        if (!(error instanceof BusError) || error.code !== "TOPIC_NOT_FOUND") throw error;
        this.#subscribed.delete(topicId); // deleted: its last update
        latest = announced + 1;
      }
      if (latest > announced) {
        if (this.#subscribed.has(topicId)) this.#subscribed.set(topicId, latest);
        await this.#notify("notifications/resources/updated", { uri: `topic://${topicId}` });
      }
    }
    if (this.#listed !== undefined) {
      const now = openTopicsSignature(this.#bus);
      if (now !== this.#listed) {
        this.#listed = now;
        await this.#notify("notifications/resources/list_changed");
      }
    }
  }

  #notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.#server.notification({ method, ...(params ? { params } : {}) } as never).catch(
      (error) => this.#bus.log.debug("A resource notification failed", { error: String(error) }),
    );
  }
}

/** What `list_changed` is about: which open topics there are, under which names (no counts). */
function openTopicsSignature(bus: Bus): string {
  return JSON.stringify(
    listTopics(bus, { status: "open", limit: MAX_TOPIC_LIST }).topics
      .map((t) => [t.topic_id, t.name]),
  );
}

function topicOf(uri: string): string {
  const match = uri.length <= 80 ? TOPIC_URI.exec(uri) : null;
  if (!match) throw unknownResource(uri.slice(0, 80));
  return match[1]!;
}

/** Topics as resources, with subscriptions (the peer profile). */
export const topicResources: Feature = {
  name: "topic resources",
  capabilities: () => TOPIC_CAPABILITIES,
  attach: (server, { bus }) => attachTopicResources(server, bus),
};
