/**
 * The HTTP request handler: guard, route, then MCP or the curl shorthand.
 *
 * Routes:
 * - `/agents/{agent}/mcp/` (trailing slash optional): the mailbox tools,
 *   the caller being `{agent}` (seed 003);
 * - `/mcp`: the peer tools of the core bus (or the profile the server is told);
 * - `/mcp/messages`: AgentChatBus's one-shot JSON-RPC endpoint (`one_shot.ts`);
 * - `/`, `/assets/...`, `/api/...`: the web console (see `lib/console`),
 *   which also accepts the token from a same-site cookie.
 *
 * Each route speaks MCP Streamable HTTP through the SDK's web-standard
 * transport, one transport and server per session (a session answers only
 * on the route that opened it). A POST of `{"tool": NAME, "args": {...}}`
 * without a `jsonrpc` field runs one tool without a session and answers
 * with its `structuredContent` as JSON, so the bus can be scripted with
 * curl. Every request passes the Host/Origin/token guard first, and a body
 * is read only up to the size limit, so a refused request stores nothing.
 *
 * The pieces are pure and live beside this file: `guard.ts` (Host, Origin,
 * token), `routes.ts` (which MCP route), `wire.ts` (bodies and JSON-RPC
 * refusals), `console_auth.ts` (the console's cookie), `sessions.ts`.
 * Input bounds: every one of them is linear on hostile input.
 *
 * @module
 */

import type { CallToolResult } from "../../mcp/_sdk.ts";
import { WebStandardStreamableHTTPServerTransport } from "../../mcp/_sdk_http.ts";
import { BusError, type ErrorCode, httpStatusOf } from "../../errors.ts";
import { createServer, type ServerDeps } from "../../mcp/server.ts";
import { createToolRunner } from "../../mcp/tool_runner.ts";
import { createConsole, type WebConsole } from "../../console/mod.ts";
import { errorResponse } from "../../http_respond.ts";
import { cookie, TOKEN_COOKIE, tokenExchange } from "./console_auth.ts";
import { checkRequest, type GuardPolicy } from "./guard.ts";
import { type Profile, profile } from "../../mcp/profiles/mod.ts";
import { type Route, routeOf } from "./routes.ts";
import { SessionRegistry } from "./sessions.ts";
import { legacySessionOf, LegacySseTransport, MAX_LEGACY_BATCH } from "./legacy_sse.ts";
import { answerOneShot, ONE_SHOT_PATHS } from "./one_shot.ts";
import { isShorthand, readJson, rpcError, startsSession } from "./wire.ts";

/** What {@linkcode createHttpHandler} needs. */
export interface HttpHandlerOptions {
  deps: ServerDeps;
  policy: GuardPolicy;
  /** Largest request body read, in bytes; larger ones get 413. */
  maxBodyBytes: number;
  /** Close sessions unused for this long. */
  sessionIdleMs: number;
  /** Answer POSTs with one JSON body instead of an SSE stream (unset: as the route's profile says). */
  jsonResponse: boolean | undefined;
  /** What `/mcp` serves (default the peer profile). */
  atMcp?: Profile;
  /** Told of sessions opening and closing (a node's session worker). */
  observer?: SessionObserver;
  /** Check every REST answer against its route's declared schema (tests). */
  checkAnswers?: boolean;
}

/** What a session worker tells its node's front (`node_pool.ts`) about its sessions. */
export interface SessionObserver {
  /** A session opened on the route with this key. */
  opened(sessionId: string, route: string): void;
  /** A session closed (its transport closed, it idled out, or the server stops). */
  closed(sessionId: string): void;
}

/** A request handler and what it holds open. */
export interface HttpHandler {
  handle(request: Request): Promise<Response>;
  /** Number of open MCP sessions. */
  readonly sessions: number;
  /** Mark a session as used now (its front answered it). */
  touch(sessionId: string): void;
  /** Close every session. */
  close(): Promise<void>;
}

const SESSION_HEADER = "mcp-session-id";

/** The paths of the older HTTP+SSE transport. */
const LEGACY_PATHS = new Set(["/sse", "/messages", "/messages/"]);

/** Build the handler that `Deno.serve` calls. */
export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  return new McpHttpHandler(options);
}

/**
 * The handler: each protocol it serves is a method, and {@linkcode handle}
 * is the table that picks one (the console, then, past the guard, the older
 * HTTP+SSE transport, AgentChatBus's one-shot endpoint, and Streamable HTTP
 * with the curl shorthand).
 */
class McpHttpHandler implements HttpHandler {
  readonly #options: HttpHandlerOptions;
  readonly #registry: SessionRegistry;
  readonly #atMcp: Profile;
  /** Shorthand calls end with the server. (Deno aborts `request.signal` after every response.) */
  readonly #shutdown = new AbortController();
  readonly #console: WebConsole;

  constructor(options: HttpHandlerOptions) {
    this.#options = options;
    this.#registry = new SessionRegistry({ idleMs: options.sessionIdleMs });
    this.#atMcp = options.atMcp ?? profile("peer");
    this.#console = createConsole({
      bus: options.deps.bus,
      search: options.deps.search,
      keepAliveMs: options.deps.bus.config.http.keepAliveSeconds * 1000,
      signal: this.#shutdown.signal,
      checkAnswers: options.checkAnswers,
    });
  }

  /** (A property, so that it may be passed on alone: `Deno.serve(handler.handle)`.) */
  readonly handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (this.#console.owns(url.pathname)) return await this.#serveConsole(request, url);
    const verdict = checkRequest(request.headers, this.#options.policy);
    if (!verdict.ok) {
      const headers: HeadersInit = verdict.status === 401 ? { "www-authenticate": "Bearer" } : {};
      return rpcError(verdict.status, -32001, verdict.message, headers);
    }
    if (LEGACY_PATHS.has(url.pathname)) return await this.#serveLegacy(request, url);
    if (ONE_SHOT_PATHS.has(url.pathname)) return await this.#serveOneShot(request);
    return await this.#serveStreamable(request, url);
  };

  get sessions(): number {
    return this.#registry.size;
  }

  touch(sessionId: string): void {
    this.#registry.touch(sessionId);
  }

  close(): Promise<void> {
    this.#shutdown.abort();
    return this.#registry.closeAll();
  }

  /** The console: a browser may carry the token in a cookie, set by opening `/?token=...`. */
  async #serveConsole(request: Request, url: URL): Promise<Response> {
    const fromQuery = url.pathname === "/" ? url.searchParams.get("token") : null;
    const verdict = checkRequest(request.headers, this.#options.policy, [
      cookie(request.headers, TOKEN_COOKIE),
      fromQuery,
    ]);
    if (!verdict.ok) {
      const message = verdict.status === 401 && url.pathname === "/"
        ? `${verdict.message}: open this page as /?token=<AGENT_BUS_HTTP_TOKEN>`
        : verdict.message;
      return errorResponse(
        new BusError(verdict.status === 401 ? "UNAUTHORIZED" : "FORBIDDEN", message),
      );
    }
    const token = this.#options.policy.token;
    if (fromQuery !== null && token !== undefined) return tokenExchange(fromQuery, token);
    return await this.#console.handle(request, url);
  }

  /** AgentChatBus's one-shot JSON-RPC endpoint (`one_shot.ts`). */
  async #serveOneShot(request: Request): Promise<Response> {
    if (request.method !== "POST") {
      return rpcError(405, -32000, "Method not allowed", { allow: "POST" });
    }
    const body = await readJson(request, this.#options.maxBodyBytes);
    if ("status" in body) return rpcError(body.status, body.code, body.message);
    return await answerOneShot(this.#atMcp, this.#options.deps, {
      body: body.value,
      endpoint: endpointOf(request),
      signal: request.signal,
    });
  }

  /** MCP Streamable HTTP on a profile's route, and the curl shorthand there. */
  async #serveStreamable(request: Request, url: URL): Promise<Response> {
    const route = routeOf(url.pathname, this.#atMcp);
    if (route === undefined) {
      return rpcError(
        404,
        -32601,
        "Not found: use /mcp, /chatbus/mcp, /agents/{agent}/mcp/, /api or /",
      );
    }
    if ("error" in route) return rpcError(400, -32602, route.error);

    const sessionId = request.headers.get(SESSION_HEADER);
    if (request.method === "POST") {
      const body = await readJson(request, this.#options.maxBodyBytes);
      if ("status" in body) return rpcError(body.status, body.code, body.message);
      if (isShorthand(body.value)) return await this.#runShorthand(route, request, body.value);
      if (sessionId !== null) return await this.#forward(route, sessionId, request, body.value);
      if (!startsSession(body.value)) {
        return rpcError(
          400,
          -32000,
          'Bad Request: no session; send initialize first (or use {"tool", "args"})',
        );
      }
      return await this.#openSession(route, request, body.value);
    }
    if (request.method === "GET" || request.method === "DELETE") {
      if (sessionId === null) {
        return rpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
      }
      return await this.#forward(route, sessionId, request, undefined);
    }
    return rpcError(405, -32000, "Method not allowed", { allow: "GET, POST, DELETE" });
  }

  async #forward(
    route: Route,
    sessionId: string,
    request: Request,
    parsedBody: unknown,
  ): Promise<Response> {
    const entry = this.#registry.touch(sessionId);
    if (
      !entry || entry.route !== route.key || entry.transport instanceof LegacySseTransport
    ) return rpcError(404, -32001, "Session not found");
    return await entry.transport.handleRequest(request, { parsedBody });
  }

  /** The older HTTP+SSE transport: `GET /sse` opens a session of `/mcp`'s profile. */
  async #serveLegacy(request: Request, url: URL): Promise<Response> {
    if (url.pathname === "/sse") {
      if (request.method !== "GET") {
        return rpcError(405, -32000, "Method not allowed", { allow: "GET" });
      }
      return await this.#openLegacySession(request);
    }
    if (request.method !== "POST") {
      return rpcError(405, -32000, "Method not allowed", { allow: "POST" });
    }
    const sessionId = legacySessionOf(url);
    if (sessionId === null) return rpcError(400, -32000, "Bad Request: sessionId is required");
    const entry = this.#registry.touch(sessionId);
    if (!entry || !(entry.transport instanceof LegacySseTransport)) {
      return rpcError(404, -32001, "Session not found");
    }
    const body = await readJson(request, this.#options.maxBodyBytes);
    if ("status" in body) return rpcError(body.status, body.code, body.message);
    if (!entry.transport.deliver(body.value)) {
      return rpcError(
        400,
        -32600,
        `Invalid Request: a batch of more than ${MAX_LEGACY_BATCH} messages; send fewer at a time`,
      );
    }
    return new Response("Accepted", { status: 202 });
  }

  async #openLegacySession(request: Request): Promise<Response> {
    const { observer } = this.#options;
    const route: Route = { key: this.#atMcp.name, profile: this.#atMcp };
    const transport = new LegacySseTransport(
      "/messages",
      this.#options.deps.bus.config.http.keepAliveSeconds * 1000,
    );
    const created = createServer(route.profile, this.#options.deps, {
      endpoint: endpointOf(request),
    });
    let closed = false;
    transport.onclose = () => {
      if (closed) return;
      closed = true;
      this.#registry.remove(transport.sessionId);
      observer?.closed(transport.sessionId);
      void created.close();
    };
    this.#registry.add(transport.sessionId, {
      transport,
      close: () => transport.close(),
      route: route.key,
      lastSeen: performance.now(),
    });
    observer?.opened(transport.sessionId, route.key);
    await created.server.connect(transport);
    return transport.response;
  }

  async #openSession(route: Route, request: Request, parsedBody: unknown): Promise<Response> {
    const { observer } = this.#options;
    const created = createServer(route.profile, this.#options.deps, {
      agent: route.agent,
      endpoint: endpointOf(request),
    });
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      if (transport.sessionId) {
        this.#registry.remove(transport.sessionId);
        observer?.closed(transport.sessionId);
      }
      await created.close();
    };
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: this.#options.jsonResponse ?? route.profile.http.jsonResponse,
        onsessioninitialized: (id) => {
          this.#registry.add(id, {
            transport,
            close,
            route: route.key,
            lastSeen: performance.now(),
          });
          observer?.opened(id, route.key);
        },
      });
    transport.onclose = () => void close();
    await created.server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    if (transport.sessionId === undefined) await close(); // the initialize was refused
    return response;
  }

  async #runShorthand(
    route: Route,
    request: Request,
    body: { tool: string; args?: unknown },
  ): Promise<Response> {
    const runner = createToolRunner(route.profile, this.#options.deps, {
      agent: route.agent,
      endpoint: endpointOf(request),
    });
    const result: CallToolResult = await runner.call(body.tool, body.args ?? {}, {
      signal: this.#shutdown.signal,
    });
    const structured = result.structuredContent as { error?: { code: ErrorCode } } | undefined;
    const status = result.isError ? httpStatusOf(structured?.error?.code ?? "INTERNAL_ERROR") : 200;
    return Response.json(structured ?? null, { status });
  }
}

/** The URL of the MCP endpoint a request reached (no query), for `bus_get_config`. */
function endpointOf(request: Request): string {
  const url = new URL(request.url);
  return `${url.origin}${url.pathname}`;
}
