/**
 * MCP's older HTTP+SSE transport (protocol 2024-11-05), which AgentChatBus
 * still serves at `GET /sse` + `POST /messages?sessionId=`: the client opens
 * an event stream, the server names the URL to POST to in an `endpoint`
 * event, and every answer comes back on the stream as a `message` event
 * (the POST itself is answered 202). Clients configured for that transport
 * keep working against agent-bus; new ones should use Streamable HTTP at
 * `/mcp`. A POST carries at most {@linkcode MAX_LEGACY_BATCH} messages, and a
 * client that stops reading its stream loses its session once a few MB of
 * answers wait for it (`lib/sse_body.ts`).
 *
 * @module
 */

import type { JSONRPCMessage, Transport } from "../../mcp/_sdk.ts";
import { type BoundedEventBody, boundedEventBody } from "../../sse_body.ts";

/**
 * Most JSON-RPC messages one POST may carry. The protocol allows batches;
 * a batch of thousands would be thousands of answers queued at once.
 */
export const MAX_LEGACY_BATCH = 32;

/** The server side of one HTTP+SSE session. */
export class LegacySseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly sessionId: string = crypto.randomUUID();
  /** The event stream to answer `GET /sse` with. */
  readonly response: Response;
  readonly #stream: BoundedEventBody;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  /**
   * @param messagesPath where the client POSTs (`/messages`)
   * @param keepAliveMs how often an idle stream gets a comment
   */
  constructor(messagesPath: string, keepAliveMs: number) {
    // A client that stops reading its answers ends its session, not this server's memory.
    this.#stream = boundedEventBody({
      farewell: ": the client fell behind its answers; the session is closed\n\n",
      onEnd: () => void this.close(),
    });
    this.#stream.write(`event: endpoint\ndata: ${messagesPath}?sessionId=${this.sessionId}\n\n`);
    this.#keepAlive = setInterval(() => this.#stream.write(": keep-alive\n\n"), keepAliveMs);
    Deno.unrefTimer(this.#keepAlive);
    this.response = new Response(this.#stream.body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-store",
        "x-content-type-options": "nosniff",
      },
    });
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.#stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return Promise.resolve();
  }

  /**
   * Messages the client POSTed (a batch arrives as its messages).
   *
   * @returns false for a batch of more than {@linkcode MAX_LEGACY_BATCH} (nothing is delivered)
   */
  deliver(body: unknown): boolean {
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length > MAX_LEGACY_BATCH) return false;
    for (const message of messages) this.onmessage?.(message as JSONRPCMessage);
    return true;
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    clearInterval(this.#keepAlive);
    this.#stream.abort(); // (a farewell, when one is due, is already queued and closed)
    this.onclose?.();
    return Promise.resolve();
  }
}

/** The session a legacy `POST /messages?sessionId=` names (AgentChatBus also reads `session_id`). */
export function legacySessionOf(url: URL): string | null {
  if (url.pathname !== "/messages" && url.pathname !== "/messages/") return null;
  return url.searchParams.get("sessionId") ?? url.searchParams.get("session_id");
}
