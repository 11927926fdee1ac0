/**
 * The REST API under `/api`: topics, messages, search, presence, posting as
 * the operator, creating and closing topics, export, and the chatbus
 * dialect's thread state (`/api/threads/{id}`, `/state`, `/close`, `/archive`).
 *
 * Each route is one {@linkcode RouteSpec}: its path, the zod schemas of its
 * query and body, and its handler. A route that does what a tool does
 * validates with that tool's schema (`topicCreateInput`, `searchInput`,
 * `outgoingMessageSchema`, ...), so both accept and refuse the same input
 * with the same `INVALID_ARGUMENT` words, and the OpenAPI document's
 * parameters and bodies are generated from the same schemas
 * (`openapi.ts`). Errors are `{error: {code, message}}` with the tools' codes.
 *
 * @module
 */

import { z } from "zod";
import {
  messagesPage,
  PRESENCE_WINDOW_SECONDS,
  presenceOverview,
  topicCount,
  topicSummaries,
  topicSummary,
} from "../bus/admin.ts";
import { threadArchiveInput, threadCloseInput, threadSetStateInput } from "../bus/chat/schemas.ts";
import { isRasterImage } from "../bus/chat/attachments.ts";
import { attachmentFile } from "../bus/chat/extras.ts";
import { threadClose, threadGet, threadSetState } from "../bus/chat/threads.ts";
import { asCall, type Bus } from "../bus/mod.ts";
import {
  agentNameArg,
  closeReasonArg,
  outgoingMessageSchema,
  topicCreateInput,
  topicListInput,
} from "../bus/schemas.ts";
import { postAs } from "../bus/sync.ts";
import { closeTopic, createTopic } from "../bus/topics.ts";
import type { ResolvedConfig } from "../config.ts";
import { BusError, invalidArgument } from "../errors.ts";
import type { SearchEngine, SearchResult } from "../search/mod.ts";
import { searchArgsOf, searchInput } from "../search/schema.ts";
import { parseInput } from "../validation.ts";
import { chatbusRoutes } from "./chatbus/mod.ts";
import { chatbusSettingsRoutes } from "./chatbus/settings.ts";
import { exportFile } from "./export_file.ts";
import { openApiDocument } from "./openapi.ts";
import { answerSchema, ok, route, type RouteSpec } from "./route_spec.ts";

export type { RouteInput, RouteSpec } from "./route_spec.ts";
import { fileResponse, json, queryArgs, readJsonObject } from "../http_respond.ts";

/** What the API works on. */
export interface ApiDeps {
  bus: Bus;
  search: SearchEngine;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  /** Check every JSON answer against its route's declared schema (tests; see `checkAnswer`). */
  checkAnswers?: boolean | undefined;
  /** When the server started (ms since the epoch), for AgentChatBus's metrics. */
  startedAt: number;
  /** How many event streams are open (`/api/events` and `/events`). */
  eventStreams: () => number;
}

/** The name the console posts as unless told otherwise. */
export const OPERATOR = "operator";
/** Most messages one page returns. */
export const MAX_PAGE = 500;

const SORTS = ["activity", "created", "name"] as const;
const int = (min: number, max: number) =>
  z.int().min(min, `must be an int >= ${min}`).max(max, `must be <= ${max}`);

/** `GET /api/topics`: `topic_list`'s arguments, plus a name filter and a sort. */
export const topicsQuery = topicListInput.omit({ cursor: true }).extend({
  q: z.string().max(200, "exceeds max length (200)").optional().describe("Part of the name"),
  sort: z.enum(SORTS).default("activity"),
});
/** `POST /api/topics/{id}/messages`: one outbox item of `sync`, and who posts it. */
export function postBody(config: ResolvedConfig) {
  return outgoingMessageSchema(config).extend({
    sender: agentNameArg.optional().describe(`Who posts (default "${OPERATOR}")`),
  });
}
/** `POST /api/topics/{id}/close`: `topic_close`'s reason. */
export const closeBody = z.strictObject({ reason: closeReasonArg });
/** `GET /api/search`: `messages_search`'s arguments (`q` is read as `query` too). */
export const searchQuery = searchInput;
/** `POST /api/threads/{id}/state`: `thread_set_state`'s state (the id is in the path). */
export const threadStateBody = threadSetStateInput.omit({ thread_id: true });
/** `POST /api/threads/{id}/close`: `thread_close`'s summary. */
export const threadCloseBody = threadCloseInput.omit({ thread_id: true });
/** `POST /api/threads/{id}/archive`: nothing besides the id. */
export const threadArchiveBody = threadArchiveInput.omit({ thread_id: true });

/** Every route, in matching order. */
export function routeSpecs(deps: ApiDeps): RouteSpec[] {
  const { bus, search } = deps;
  const routes = [
    route({
      method: "GET",
      path: "/api/openapi.json",
      summary: "This document",
      responses: { "200": { description: "OpenAPI 3.1" } },
      handle: () => json(openApiDocument(routeSpecs(deps))),
    }),
    route({
      method: "GET",
      path: "/api/topics",
      summary: "List topics with message counts, last activity and presence counts",
      query: topicsQuery,
      responses: { "200": ok("Topics", "TopicList"), ...errors(400) },
      handle: ({ query }) => listTopics(bus, query),
    }),
    route({
      method: "POST",
      path: "/api/topics",
      summary: "Open a topic (the topic_create tool: mode=reuse returns an open one of that name)",
      body: topicCreateInput,
      responses: {
        "200": ok("Reused", "TopicCreated"),
        "201": ok("Created", "TopicCreated"),
        ...errors(400, 413, 415),
      },
      handle: async ({ body }) => {
        const created = await createTopic(bus, {
          name: body.name ?? undefined,
          metadata: body.metadata,
          mode: body.mode,
        });
        return json(
          { topic: topicSummary(bus, created.topic.topic_id), reused: created.reused },
          created.reused ? 200 : 201,
        );
      },
    }),
    route({
      method: "GET",
      path: "/api/topics/{id}",
      summary: "A topic, who is present, and its latest messages",
      query: z.strictObject({ messages: int(0, MAX_PAGE).default(50) }),
      responses: { "200": ok("The topic", "TopicView"), ...errors(400, 404) },
      handle: ({ params: { id }, query }) => {
        const topic = topicSummary(bus, id!);
        const page = messagesPage(bus, id!, { limit: query.messages });
        return json({
          topic,
          presence: presenceOverview(bus, { topicId: id! }).topics[id!] ?? [],
          messages: page.messages,
          has_more: page.has_more,
        });
      },
    }),
    route({
      method: "GET",
      path: "/api/topics/{id}/messages",
      summary: "A page of messages, oldest first",
      query: z.strictObject({
        after_seq: int(0, Number.MAX_SAFE_INTEGER).optional().describe("Messages after this seq"),
        before_seq: int(1, Number.MAX_SAFE_INTEGER).optional()
          .describe("The newest messages before this seq"),
        limit: int(1, MAX_PAGE).default(100),
      }),
      responses: { "200": ok("Messages", "MessagePage"), ...errors(400, 404) },
      handle: ({ params: { id }, query }) => {
        if (query.after_seq !== undefined && query.before_seq !== undefined) {
          throw invalidArgument("Give after_seq or before_seq, not both");
        }
        const page = messagesPage(bus, id!, {
          afterSeq: query.after_seq,
          beforeSeq: query.before_seq,
          limit: query.limit,
        });
        return json({ topic_id: id, ...page });
      },
    }),
    route({
      method: "POST",
      path: "/api/topics/{id}/messages",
      summary: "Post a message (as `operator` unless `sender` is given): one item of sync's outbox",
      body: postBody(bus.config),
      responses: {
        "200": ok("Already posted with this client_message_id", "Posted"),
        "201": ok("Posted", "Posted"),
        ...errors(400, 404, 409, 413, 415),
      },
      handle: async ({ params: { id }, body }) => {
        const { sender, ...item } = body;
        const [posted] = await postAs(bus, {
          topicId: id!,
          sender: sender ?? OPERATOR,
          outbox: [item],
        });
        return json(posted, posted!.duplicate ? 200 : 201);
      },
    }),
    route({
      method: "POST",
      path: "/api/topics/{id}/close",
      summary: "Close a topic (the topic_close tool)",
      body: closeBody,
      responses: { "200": ok("Closed", "TopicClosed"), ...errors(400, 404, 415) },
      handle: async ({ params: { id }, body }) => {
        const closed = await closeTopic(bus, { topicId: id!, reason: body.reason ?? undefined });
        return json({ topic: topicSummary(bus, id!), warnings: closed.warnings });
      },
    }),
    route({
      method: "GET",
      path: "/api/topics/{id}/export",
      summary: "The whole topic as a file",
      query: z.strictObject({ format: z.enum(["markdown", "json"]).default("markdown") }),
      responses: {
        "200": {
          description: "Markdown or JSON, as an attachment",
          content: { "text/markdown": {}, "application/json": {} },
        },
        ...errors(400, 404),
      },
      handle: ({ params: { id }, query }) => exportFile(bus, id!, query.format),
    }),
    route({
      method: "GET",
      path: "/api/presence",
      summary: "Agents present in every topic, and whether their sync is waiting",
      query: z.strictObject({
        window_seconds: int(1, 86_400).default(PRESENCE_WINDOW_SECONDS),
      }),
      responses: { "200": ok("Presence", "PresenceOverview"), ...errors(400) },
      handle: ({ query }) => json(presenceOverview(bus, { windowSeconds: query.window_seconds })),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}",
      summary: "A topic as a chatbus thread: state, summary, system prompt, template, admin",
      responses: { "200": ok("The thread", "Thread"), ...errors(404) },
      handle: ({ params: { id } }) => json(threadGet(bus, id!)),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/state",
      summary: "Set a thread's state (the thread_set_state tool; a closed thread reopens)",
      body: threadStateBody,
      responses: { "200": ok("The thread", "Thread"), ...errors(400, 404, 415) },
      handle: async ({ params: { id }, body }) => json(await threadSetState(bus, id!, body.state)),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/close",
      summary: "Close a thread with an optional summary (the thread_close tool)",
      body: threadCloseBody,
      responses: { "200": ok("The thread", "Thread"), ...errors(400, 404, 415) },
      handle: async ({ params: { id }, body }) => json(await threadClose(bus, id!, body.summary)),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/archive",
      summary: "Archive a thread (the thread_archive tool)",
      body: threadArchiveBody,
      responses: { "200": ok("The thread", "Thread"), ...errors(400, 404, 415) },
      handle: async ({ params: { id } }) => json(await threadSetState(bus, id!, "archived")),
    }),
    route({
      method: "GET",
      path: "/api/messages/{message_id}/attachments/{n}",
      summary:
        "A file or image attached to a chatbus message (n counts from 0): raster images inline, " +
        "anything else (SVG included) as an application/octet-stream download; never active content",
      responses: {
        "200": {
          description: "The attachment",
          content: { "image/*": {}, "application/octet-stream": {} },
        },
        ...errors(404),
      },
      handle: ({ params }) => {
        const n = Number(params.n);
        const file = attachmentFile(bus, params.message_id!, n);
        return fileResponse(file.bytes, {
          mimeType: file.mimeType,
          isRaster: isRasterImage(file.mimeType),
          name: file.name ?? `attachment-${n}`,
        });
      },
    }),
    route({
      method: "GET",
      path: "/api/search",
      summary: "Search every message (the messages_search tool; `q` is accepted for `query`, " +
        "`thread_id` for `topic_id`, and the answer carries AgentChatBus's names too)",
      query: searchQuery,
      aliases: { q: "query", thread_id: "topic_id" },
      responses: {
        "200": ok(
          "Results; snippets are HTML-escaped text with hits marked « and »",
          "SearchResult",
        ),
      },
      handle: async ({ query }) => json(withChatbusNames(await search.search(searchArgsOf(query)))),
    }),
    ...chatbusRoutes(bus, deps),
    ...chatbusSettingsRoutes(bus),
  ];
  return routes as RouteSpec[];
}

/**
 * A search as REST answers it: the tool's result with AgentChatBus's names
 * beside ours (`total`; each hit's `thread_id`, `thread_topic` and
 * `author`), so that its web UI and scripts read it as they read its own.
 * Snippets are HTML-escaped: AgentChatBus's web UI inserts them as HTML, and
 * a message's markup must not run there either.
 */
function withChatbusNames(result: SearchResult) {
  return {
    ...result,
    total: result.count,
    results: result.results.map((hit) => ({
      ...hit,
      snippet: escapeHtml(hit.snippet),
      thread_id: hit.topic_id,
      thread_topic: hit.topic_name,
      author: hit.sender,
    })),
  };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made safe to insert as HTML (one pass, linear). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}

/** Answer one `/api/...` request. */
export function createApi(deps: ApiDeps): (request: Request, url: URL) => Promise<Response> {
  const routes = routeSpecs(deps).map((spec) => ({ spec, pattern: patternOf(spec.path) }));
  return async (request, url) => {
    const allowed: string[] = [];
    for (const { spec, pattern } of routes) {
      const match = pattern.exec(url.pathname);
      if (!match) continue;
      if (spec.method !== request.method) {
        allowed.push(spec.method);
        continue;
      }
      const values = match.slice(1).map(decodePathPart);
      const names = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const params = Object.fromEntries(names.map((name, i) => [name, values[i]!]));
      const query = spec.query
        ? parseInput(spec.query, queryArgs(url, spec.query, spec.aliases))
        : undefined;
      const body = spec.body
        ? parseInput(
          spec.body,
          hasBody(request) ? await readJsonObject(request, deps.maxBodyBytes) : {},
        )
        : undefined;
      const response = await asCall(
        deps.bus,
        async () => await spec.handle({ request, params, query, body }),
      );
      if (deps.checkAnswers) await checkAnswer(spec, response);
      return response;
    }
    if (allowed.length > 0) {
      throw new BusError("METHOD_NOT_ALLOWED", `${request.method} is not allowed`, {
        context: { allowed: [...new Set(allowed)] },
      });
    }
    throw new BusError("NOT_FOUND", `No API route ${url.pathname}; see /api/openapi.json`);
  };
}

/**
 * Throw when `response` (JSON) does not match the schema its route declares
 * for its status: an answer that drifted from its description is a server
 * bug the tests must see (only an API built with `checkAnswers` looks).
 */
export async function checkAnswer(spec: RouteSpec, response: Response): Promise<void> {
  const schema = answerSchema(spec, response.status);
  if (!schema) return;
  const checked = schema.safeParse(await response.clone().json());
  if (!checked.success) {
    throw new TypeError(
      `${spec.method} ${spec.path} answered ${response.status} off its schema: ` +
        z.prettifyError(checked.error),
    );
  }
}

/** False for a POST sent without a body at all (`curl -X POST`). */
function hasBody(request: Request): boolean {
  return request.body !== null && request.headers.get("content-length") !== "0";
}

/** The matcher of a path template: each `{name}` is one segment. */
function patternOf(path: string): RegExp {
  const source = path.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("([^/]+)");
  return new RegExp(`^${source}$`);
}

/** A percent-decoded path segment; a malformed one is a bad argument, not a crash. */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalidArgument(`Malformed percent-encoding in "${part}"`);
  }
}

function errors(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [String(status), { $ref: `#/components/responses/E${status}` }]),
  );
}

function listTopics(bus: Bus, query: z.output<typeof topicsQuery>): Response {
  const filter = { status: query.status, nameContains: query.q };
  const topics = topicSummaries(bus, { ...filter, sort: query.sort, limit: query.limit });
  return json({ topics, count: topics.length, total: topicCount(bus, filter) });
}
