/**
 * Telling a peer-bus client that mail arrived, the moment it does.
 *
 * Two ways, chosen per server:
 * - `resources` (default): the mailbox is the resource `mailbox://NAME`;
 *   a client that subscribes to it gets `notifications/resources/updated`
 *   when new mail arrives, and can `resources/read` it (unread messages,
 *   left unread) or call `bus.drain`.
 * - `claude-channel`: Claude Code's channel protocol (experimental
 *   capability `claude/channel`). New mail is taken from the mailbox and
 *   pushed as `notifications/claude/channel` with the body as `content`
 *   (a string body as is, any other as its JSON text)
 *   and `from`, `id`, `source` as `meta`, so it lands in the running
 *   session without a tool call. Pushed mail counts as delivered. Claude
 *   Code drops notifications sent before it has finished initializing, so
 *   nothing is pushed before `notifications/initialized`.
 *
 * Either way the watch waits on the process's change feed: no polling that
 * writes, and a wake-up within milliseconds of the sender's commit.
 *
 * @module
 */

import {
  ListResourcesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "../_sdk.ts";
import { bodyJson, bodyOf, drainMail, peekMailbox, peersOf, unreadMail } from "../../bus/mail.ts";
import type { Bus } from "../../bus/mod.ts";
import { onEachChange } from "../../bus/waiting.ts";
import type { ProtocolServer } from "../protocol_server.ts";
import type { Feature, PushMode } from "./mod.ts";
import { unknownResource } from "../invalid_params.ts";

/** The capabilities a push mode adds to `initialize`. */
export function pushCapabilities(mode: PushMode): Record<string, unknown> {
  if (mode === "resources") return { resources: { subscribe: true, listChanged: false } };
  if (mode === "claude-channel") return { experimental: { "claude/channel": {} } };
  return {};
}

/**
 * Wire the push mode into `server` for `agent`.
 *
 * @returns a function that stops the watch
 */
export function attachMailboxPush(
  server: ProtocolServer,
  options: { bus: Bus; agent: string; mode: PushMode },
): () => void {
  const { mode } = options;
  if (mode === "none") return () => {};
  const push = new MailboxPush(server, { ...options, mode });
  return () => push.stop();
}

/** One connection's mailbox push: its resource (or channel), and the watch that announces mail. */
class MailboxPush {
  readonly #server: ProtocolServer;
  readonly #bus: Bus;
  readonly #agent: string;
  readonly #mode: Exclude<PushMode, "none">;
  readonly #uri: string;
  readonly #controller = new AbortController();
  #subscribed = false;
  #initialized = false;
  /** Started by the first subscription (or, for channels, by initialization); runs until stopped. */
  #watching = false;

  constructor(
    server: ProtocolServer,
    options: { bus: Bus; agent: string; mode: Exclude<PushMode, "none"> },
  ) {
    this.#server = server;
    this.#bus = options.bus;
    this.#agent = options.agent;
    this.#mode = options.mode;
    this.#uri = `mailbox://${options.agent}`;
    if (this.#mode === "resources") this.#serveResource();
    const previous = server.oninitialized;
    server.oninitialized = () => {
      previous?.();
      this.#onInitialized();
    };
  }

  /** Stop the watch. */
  stop(): void {
    this.#controller.abort();
  }

  /** The mailbox as a resource a client can read and subscribe to. */
  #serveResource(): void {
    const uri = this.#uri;
    const agent = this.#agent;
    this.#server.setRequestHandler(ListResourcesRequestSchema, () => ({
      resources: [{
        uri,
        name: `${agent} mailbox`,
        description: `Unread messages for ${agent}; subscribe to hear about new ones`,
        mimeType: "application/json",
      }],
    }));
    this.#server.setRequestHandler(ReadResourceRequestSchema, (request) => {
      if (request.params.uri !== uri) throw unknownResource(request.params.uri);
      const { messages, unread } = peekMailbox(this.#bus, agent, 100);
      const listed = messages.map((m) =>
        `{"id":${JSON.stringify(m.id)},"from":${JSON.stringify(m.from)},"source":${
          JSON.stringify(m.source)
        },"body":${bodyJson(m)}}`
      );
      return {
        contents: [{
          uri,
          mimeType: "application/json",
          text: `{"unread":${unread},"messages":[${listed.join(",")}]}`,
        }],
      };
    });
    this.#server.setRequestHandler(SubscribeRequestSchema, (request) => {
      if (request.params.uri === uri) {
        this.#subscribed = true;
        this.#watch();
      }
      return {};
    });
    this.#server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      if (request.params.uri === uri) this.#subscribed = false;
      return {};
    });
  }

  #onInitialized(): void {
    // A client that says `initialized` twice gets one announcement and one watch.
    if (this.#initialized) return;
    this.#initialized = true;
    if (this.#mode === "claude-channel") {
      // Like the seed's cc adapter: announce once the client can take notifications.
      this.#announceSelf().catch((error) =>
        this.#bus.log.warn("Could not announce the channel", { error: String(error) })
      );
      this.#watch();
    }
  }

  async #announceSelf(): Promise<void> {
    const agent = this.#agent;
    const { peers } = peersOf(this.#bus, agent);
    await this.#server.notification({
      method: "notifications/claude/channel",
      params: {
        content: `agent-bus: you are "${agent}" on the peer bus; messages sent to you arrive ` +
          `here. Other peers now: ${peers.length > 0 ? peers.join(", ") : "none"}. Reply with ` +
          `bus.send(to, body).`,
        meta: { from: "agent-bus", source: "agent-bus", event: "announce", self: agent },
      },
    } as never);
  }

  async #announce(unread: number): Promise<void> {
    if (this.#mode === "resources") {
      if (this.#subscribed) {
        await this.#server.notification({
          method: "notifications/resources/updated",
          params: { uri: this.#uri },
        });
      }
      return;
    }
    if (!this.#initialized || unread === 0) return;
    const { messages } = await drainMail(this.#bus, this.#agent);
    for (const m of messages) {
      const body = bodyOf(m);
      await this.#server.notification({
        method: "notifications/claude/channel",
        params: {
          content: typeof body === "string" ? body : bodyJson(m),
          meta: { from: m.from, id: m.id, source: m.source },
        },
      } as never);
    }
  }

  #watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    const bus = this.#bus;
    const agent = this.#agent;
    const channel = this.#mode === "claude-channel";
    (async () => {
      let last = channel ? 0 : unreadMail(bus, agent);
      await onEachChange(bus, { signal: this.#controller.signal }, async () => {
        const unread = unreadMail(bus, agent);
        if (unread > last || (channel && unread > 0)) {
          await this.#announce(unread).catch((error) =>
            bus.log.warn("Could not announce new mail", { error: String(error) })
          );
        }
        last = channel ? 0 : unread;
        return undefined;
      });
    })().catch((error) => bus.log.warn("The mailbox watch stopped", { error: String(error) }));
  }
}

/** New mail announced to a connection that has an agent name (mailbox and peer-bus). */
export const mailboxPush: Feature = {
  name: "mailbox push",
  capabilities: ({ agent, push }) => pushCapabilities(agent ? push : "none"),
  attach: (server, { bus, agent, push }) =>
    agent ? attachMailboxPush(server, { bus, agent, mode: push }) : () => {},
};
