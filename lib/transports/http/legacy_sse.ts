/**
 * MCP's older HTTP+SSE transport (protocol 2024-11-05), which AgentChatBus
 * still serves at `GET /sse` + `POST /messages?sessionId=`: the client opens
 * an event stream, the server names the URL to POST to in an `endpoint`
 * event, and every answer comes back on the stream as a `message` event
 * (the POST itself is answered 202). Clients configured for that transport
 * keep working against agent-bus; new ones should use Streamable HTTP at
 * `/mcp`.
 *
 * @module
 */

import type { JSONRPCMessage, Transport } from "../../mcp/_sdk.ts";

const encoder = new TextEncoder();

/** The server side of one HTTP+SSE session. */
export class LegacySseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly sessionId: string = crypto.randomUUID();
  /** The event stream to answer `GET /sse` with. */
  readonly response: Response;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  /**
   * @param messagesPath where the client POSTs (`/messages`)
   * @param keepAliveMs how often an idle stream gets a comment
   */
  constructor(messagesPath: string, keepAliveMs: number) {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => void this.close(),
    });
    this.#write(`event: endpoint\ndata: ${messagesPath}?sessionId=${this.sessionId}\n\n`);
    this.#keepAlive = setInterval(() => this.#write(": keep-alive\n\n"), keepAliveMs);
    Deno.unrefTimer(this.#keepAlive);
    this.response = new Response(stream, {
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
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return Promise.resolve();
  }

  /** A message the client POSTed (a batch arrives as its messages). */
  deliver(body: unknown): void {
    for (const message of Array.isArray(body) ? body : [body]) {
      this.onmessage?.(message as JSONRPCMessage);
    }
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    clearInterval(this.#keepAlive);
    try {
      this.#controller.close();
    } catch { /* the client went away first */ }
    this.onclose?.();
    return Promise.resolve();
  }

  #write(text: string): void {
    if (this.#closed) return;
    try {
      this.#controller.enqueue(encoder.encode(text));
    } catch {
      void this.close(); // (the stream was cancelled)
    }
  }
}

/** The session a legacy `POST /messages?sessionId=` names (AgentChatBus also reads `session_id`). */
export function legacySessionOf(url: URL): string | null {
  if (url.pathname !== "/messages" && url.pathname !== "/messages/") return null;
  return url.searchParams.get("sessionId") ?? url.searchParams.get("session_id");
}
