/**
 * The web console: the page at `/`, its embedded assets, the REST API under
 * `/api` and the live event stream at `/api/events`. The HTTP transport
 * guards requests (Host, Origin, token) before they reach {@linkcode
 * WebConsole.handle}; here every response gets security headers (a strict
 * Content-Security-Policy: no inline script, no remote content), and
 * posting requires a JSON body and a same-origin `Origin`.
 *
 * @module
 */

import type { Bus } from "../bus/mod.ts";
import { BusError } from "../errors.ts";
import type { SearchEngine } from "../search/mod.ts";
import { createApi } from "./api.ts";
import { assetResponse, isAsset } from "./assets.ts";
import { chatbusEventStream } from "./chatbus/events.ts";
import { EventHub, eventsQuery, eventStream } from "./events.ts";
import { parseInput } from "../validation.ts";
import { errorResponse, inert, queryArgs } from "../http_respond.ts";

/** What the console needs. */
export interface ConsoleOptions {
  bus: Bus;
  search: SearchEngine;
  /** Keep-alive interval of idle event streams. */
  keepAliveMs: number;
  /** Ends open event streams (server shutdown). */
  signal: AbortSignal;
  /** Check every REST answer against its route's declared schema (tests). */
  checkAnswers?: boolean | undefined;
}

/** The console's request handler. */
export interface WebConsole {
  /** True for the paths the console serves. */
  owns(pathname: string): boolean;
  /**
   * Answer a request that passed the guard (which also refuses any browser
   * request from another origin, so a cross-site page can neither read nor write).
   */
  handle(request: Request, url: URL): Promise<Response>;
}

const SECURITY_HEADERS: HeadersInit = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    // Mermaid and highlight.js style their output inline; no script can run from it.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/** The REST API's paths: `/api/...`, and AgentChatBus's `/health` and `/events`. */
function isApi(pathname: string): boolean {
  return pathname.startsWith("/api/") || pathname === "/health" || pathname === "/events";
}

/** Build the console. */
export function createConsole(options: ConsoleOptions): WebConsole {
  // A body holds one message: its longest text, JSON-escaped, plus the other fields.
  const maxBodyBytes = options.bus.config.maxMessageChars * 6 + (64 << 10);
  // One reader of changes for every open event stream of this process.
  const hub = new EventHub(options.bus);
  const api = createApi({
    ...options,
    maxBodyBytes,
    startedAt: Date.now(),
    eventStreams: () => hub.subscribers,
  });
  options.signal.addEventListener("abort", () => hub.close(), { once: true });
  const handle = async (request: Request, url: URL): Promise<Response> => {
    try {
      if (url.pathname === "/api/events") {
        if (request.method !== "GET") {
          throw new BusError("METHOD_NOT_ALLOWED", `${request.method} is not allowed`);
        }
        const query = parseInput(eventsQuery, queryArgs(url, eventsQuery));
        const header = request.headers.get("last-event-id");
        const lastEventId = header !== null && /^\d{1,15}$/.test(header)
          ? Number(header)
          : query.last_event_id;
        return inert(eventStream(options.bus, {
          hub,
          topicId: query.topic_id,
          lastEventId,
          keepAliveMs: options.keepAliveMs,
          signal: options.signal,
        }));
      }
      if (url.pathname === "/events") {
        if (request.method !== "GET") {
          throw new BusError("METHOD_NOT_ALLOWED", `${request.method} is not allowed`);
        }
        return inert(
          chatbusEventStream({
            bus: options.bus,
            hub,
            keepAliveMs: options.keepAliveMs,
            signal: options.signal,
          }),
        );
      }
      if (isApi(url.pathname)) return inert(await api(request, url));
      if (request.method !== "GET" && request.method !== "HEAD") {
        throw new BusError("METHOD_NOT_ALLOWED", `${request.method} is not allowed`);
      }
      return await assetResponse(url.pathname, SECURITY_HEADERS);
    } catch (error) {
      if (!(error instanceof BusError)) {
        options.bus.log.error("console request failed", { error: String(error) });
      }
      return inert(errorResponse(error));
    }
  };
  return {
    owns: (pathname) => isApi(pathname) || isAsset(pathname),
    handle,
  };
}
