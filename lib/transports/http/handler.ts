/**
 * The HTTP request handler: guard, route, then MCP or the curl shorthand.
 *
 * Routes:
 * - `/agents/{agent}/mcp/` (trailing slash optional): the mailbox tools,
 *   the caller being `{agent}` (seed 003);
 * - `/mcp`: the peer tools of the core bus;
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
 * Input bounds: the guard's checks are linear (see `guard.ts`); the route is
 * one anchored match whose only quantifier stops at `/`; the cookie header
 * is split once and a malformed `%`-escape in it is no token, not an error.
 *
 * @module
 */

// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { cleanMailAgent } from "../../bus/mail.ts";
import { BusError, type ErrorCode, httpStatusOf } from "../../errors.ts";
import type { ProfileName } from "../../mcp/profiles.ts";
import { createServer, type ServerDeps } from "../../mcp/server.ts";
import { createToolRunner } from "../../mcp/tool_runner.ts";
import { createConsole, type WebConsole } from "../../console/mod.ts";
import { errorResponse, readCappedBody } from "../../console/respond.ts";
import { timingSafeEqual } from "../../strings.ts";
import { checkRequest, type GuardPolicy } from "./guard.ts";
import { SessionRegistry } from "./sessions.ts";

/** What {@linkcode createHttpHandler} needs. */
export interface HttpHandlerOptions {
  deps: ServerDeps;
  policy: GuardPolicy;
  /** Largest request body read, in bytes; larger ones get 413. */
  maxBodyBytes: number;
  /** Close sessions unused for this long. */
  sessionIdleMs: number;
  /** Answer POSTs with one JSON body instead of an SSE stream (unset: mailbox routes only). */
  jsonResponse: boolean | undefined;
}

/** A request handler and what it holds open. */
export interface HttpHandler {
  handle(request: Request): Promise<Response>;
  /** Number of open MCP sessions. */
  readonly sessions: number;
  /** Close every session. */
  close(): Promise<void>;
}

interface Route {
  /** Sessions are bound to this key: `peer` or `agent:NAME`. */
  key: string;
  profile: ProfileName;
  agent?: string;
}

const SESSION_HEADER = "mcp-session-id";
const TOKEN_COOKIE = "agent_bus_token";

/** Build the handler that `Deno.serve` calls. */
export function createHttpHandler(options: HttpHandlerOptions): HttpHandler {
  const registry = new SessionRegistry({ idleMs: options.sessionIdleMs });
  // Shorthand calls end with the server. (Deno aborts `request.signal` after
  // every response and warns when something listens to it.)
  const shutdown = new AbortController();

  const webConsole: WebConsole = createConsole({
    bus: options.deps.bus,
    search: options.deps.search,
    keepAliveMs: options.deps.bus.config.http.keepAliveSeconds * 1000,
    signal: shutdown.signal,
  });

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (webConsole.owns(url.pathname)) return await handleConsole(request, url);
    const verdict = checkRequest(request.headers, options.policy);
    if (!verdict.ok) {
      const headers: HeadersInit = verdict.status === 401 ? { "www-authenticate": "Bearer" } : {};
      return rpcError(verdict.status, -32001, verdict.message, headers);
    }
    const route = routeOf(url.pathname);
    if (route === undefined) {
      return rpcError(404, -32601, "Not found: use /mcp, /agents/{agent}/mcp/, /api or /");
    }
    if ("error" in route) return rpcError(400, -32602, route.error);

    const sessionId = request.headers.get(SESSION_HEADER);
    if (request.method === "POST") {
      const body = await readJson(request, options.maxBodyBytes);
      if ("status" in body) return rpcError(body.status, body.code, body.message);
      if (isShorthand(body.value)) return await runShorthand(route, body.value);
      if (sessionId !== null) return await forward(route, sessionId, request, body.value);
      if (!startsSession(body.value)) {
        return rpcError(
          400,
          -32000,
          'Bad Request: no session; send initialize first (or use {"tool", "args"})',
        );
      }
      return await openSession(route, request, body.value);
    }
    if (request.method === "GET" || request.method === "DELETE") {
      if (sessionId === null) {
        return rpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
      }
      return await forward(route, sessionId, request, undefined);
    }
    return rpcError(405, -32000, "Method not allowed", { allow: "GET, POST, DELETE" });
  };

  /** The console: a browser may carry the token in a cookie, set by opening `/?token=...`. */
  const handleConsole = async (request: Request, url: URL): Promise<Response> => {
    const fromQuery = url.pathname === "/" ? url.searchParams.get("token") : null;
    const verdict = checkRequest(request.headers, options.policy, [
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
    const token = options.policy.token;
    if (fromQuery !== null && token !== undefined) {
      // Trade the token in the address for a cookie scripts cannot read, and drop it from the
      // URL. (A wrong one beside a good cookie is only dropped.)
      const headers: HeadersInit = timingSafeEqual(fromQuery, token)
        ? {
          location: "/",
          "set-cookie": `${TOKEN_COOKIE}=${
            encodeURIComponent(token)
          }; Path=/; HttpOnly; SameSite=Strict`,
        }
        : { location: "/" };
      return new Response(null, { status: 303, headers });
    }
    return await webConsole.handle(request, url);
  };

  const forward = async (
    route: Route,
    sessionId: string,
    request: Request,
    parsedBody: unknown,
  ): Promise<Response> => {
    const entry = registry.touch(sessionId);
    if (!entry || entry.route !== route.key) return rpcError(404, -32001, "Session not found");
    return await entry.transport.handleRequest(request, { parsedBody });
  };

  const openSession = async (
    route: Route,
    request: Request,
    parsedBody: unknown,
  ): Promise<Response> => {
    const created = createServer(route.profile, options.deps, { agent: route.agent });
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      if (transport.sessionId) registry.remove(transport.sessionId);
      await created.close();
    };
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: options.jsonResponse ?? route.profile === "mailbox",
        onsessioninitialized: (id) => {
          registry.add(id, { transport, close, route: route.key, lastSeen: performance.now() });
        },
      });
    transport.onclose = () => void close();
    await created.server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    if (transport.sessionId === undefined) await close(); // the initialize was refused
    return response;
  };

  const runShorthand = async (
    route: Route,
    body: { tool: string; args?: unknown },
  ): Promise<Response> => {
    const runner = createToolRunner(route.profile, options.deps, { agent: route.agent });
    const result: CallToolResult = await runner.call(body.tool, body.args ?? {}, {
      signal: shutdown.signal,
    });
    const structured = result.structuredContent as { error?: { code: ErrorCode } } | undefined;
    const status = result.isError ? httpStatusOf(structured?.error?.code ?? "INTERNAL_ERROR") : 200;
    return Response.json(structured ?? null, { status });
  };

  return {
    handle,
    get sessions() {
      return registry.size;
    },
    close() {
      shutdown.abort();
      return registry.closeAll();
    },
  };
}

/** The route of a path, an error for a bad agent name, or undefined for no route. */
function routeOf(pathname: string): Route | { error: string } | undefined {
  if (pathname === "/mcp" || pathname === "/mcp/") return { key: "peer", profile: "peer" };
  const match = /^\/agents\/([^/]+)\/mcp\/?$/.exec(pathname);
  if (!match) return undefined;
  try {
    const agent = cleanMailAgent(decodeURIComponent(match[1]!), "agent");
    return { key: `agent:${agent}`, profile: "mailbox", agent };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

type Body = { value: unknown } | { status: 400 | 413; code: number; message: string };

/** Read and parse a JSON body, refusing it unread when it is too large. */
async function readJson(request: Request, maxBytes: number): Promise<Body> {
  const tooLarge = {
    status: 413,
    code: -32000,
    message: `Request body exceeds ${maxBytes} bytes`,
  } as const;
  const length = request.headers.get("content-length");
  if (length !== null && Number(length) > maxBytes) return tooLarge;
  // A declared length is enforced by the HTTP layer, so the body can be taken whole;
  // a chunked body is counted as it streams.
  const bytes = length !== null
    ? new Uint8Array(await request.arrayBuffer())
    : await readCappedBody(request, maxBytes);
  if (bytes === undefined) return tooLarge;
  try {
    return { value: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch {
    return { status: 400, code: -32700, message: "Parse error: the body is not JSON" };
  }
}

/**
 * A cookie's value from the `Cookie` header, if present and well formed (a
 * malformed `%`-escape is no token, not a server error). Linear: one split.
 */
function cookie(headers: Headers, name: string): string | undefined {
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at === -1 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function isShorthand(value: unknown): value is { tool: string; args?: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    !("jsonrpc" in value) && typeof (value as { tool?: unknown }).tool === "string";
}

function startsSession(value: unknown): boolean {
  return Array.isArray(value) ? value.some(isInitializeRequest) : isInitializeRequest(value);
}

function rpcError(
  status: number,
  code: number,
  message: string,
  headers: HeadersInit = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}
