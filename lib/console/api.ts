/**
 * The REST API under `/api`: topics, messages, search, presence, posting as
 * the operator, creating and closing topics, and export. Every route reads
 * bounded parameters, answers JSON (export answers the file), and reports
 * errors as `{error: {code, message}}` with the tools' codes. The contract
 * is written out in `openapi.ts`.
 *
 * @module
 */

import {
  messagesPage,
  PRESENCE_WINDOW_SECONDS,
  presenceOverview,
  topicSummaries,
  type TopicSummary,
  topicSummary,
} from "../bus/admin.ts";
import { exportJson, exportMarkdown, exportMessages } from "../bus/export.ts";
import type { Bus } from "../bus/mod.ts";
import { postAs } from "../bus/sync.ts";
import { closeTopic, createTopic, MAX_TOPIC_LIST } from "../bus/topics.ts";
import type { SearchEngine } from "../search/mod.ts";
import { MAX_SEARCH_LIMIT } from "../search/mod.ts";
import { openApiDocument } from "./openapi.ts";
import { BusError, invalidArgument } from "../errors.ts";
import { json, Query, readJsonObject, stringField } from "./respond.ts";

/** What the API works on. */
export interface ApiDeps {
  bus: Bus;
  search: SearchEngine;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
}

/** The name the console posts as unless told otherwise. */
export const OPERATOR = "operator";
/** Most messages one page returns. */
export const MAX_PAGE = 500;

type Handler = (request: Request, url: URL, params: string[]) => Promise<Response> | Response;
type Route = [method: "GET" | "POST", pattern: RegExp, handler: Handler];

/** Answer one `/api/...` request. */
export function createApi(deps: ApiDeps): (request: Request, url: URL) => Promise<Response> {
  const { bus, search } = deps;
  const routes: Route[] = [
    ["GET", /^\/api\/openapi\.json$/, () => json(openApiDocument())],
    ["GET", /^\/api\/topics$/, (_, url) => listTopics(bus, new Query(url))],
    ["POST", /^\/api\/topics$/, async (request) => {
      const body = await readJsonObject(request, deps.maxBodyBytes);
      const created = await createTopic(bus, {
        name: stringField(body, "name"),
        mode: body.new === true ? "new" : "reuse",
      });
      return json(
        { topic: topicSummary(bus, created.topic.topic_id), reused: created.reused },
        created.reused ? 200 : 201,
      );
    }],
    ["GET", /^\/api\/topics\/([^/]+)$/, (_, url, [id]) => {
      const query = new Query(url);
      const limit = query.int("messages", { min: 0, max: MAX_PAGE, fallback: 50 });
      const topic = topicSummary(bus, id!);
      const page = messagesPage(bus, id!, { limit });
      return json({
        topic,
        presence: presenceOverview(bus, { topicId: id! }).topics[id!] ?? [],
        messages: page.messages,
        has_more: page.has_more,
      });
    }],
    ["GET", /^\/api\/topics\/([^/]+)\/messages$/, (_, url, [id]) => {
      const query = new Query(url);
      const afterSeq = query.int("after_seq", { min: 0, max: Number.MAX_SAFE_INTEGER });
      const beforeSeq = query.int("before_seq", { min: 1, max: Number.MAX_SAFE_INTEGER });
      if (afterSeq !== undefined && beforeSeq !== undefined) {
        throw invalidArgument("Give after_seq or before_seq, not both");
      }
      const limit = query.int("limit", { min: 1, max: MAX_PAGE, fallback: 100 });
      return json({ topic_id: id, ...messagesPage(bus, id!, { afterSeq, beforeSeq, limit }) });
    }],
    ["POST", /^\/api\/topics\/([^/]+)\/messages$/, async (request, _, [id]) => {
      const body = await readJsonObject(request, deps.maxBodyBytes);
      const content = stringField(body, "content_markdown");
      if (content === undefined) {
        throw invalidArgument("content_markdown is required");
      }
      const [posted] = await postAs(bus, {
        topicId: id!,
        sender: stringField(body, "sender") ?? OPERATOR,
        outbox: [{
          content_markdown: content,
          message_type: stringField(body, "message_type"),
          reply_to: stringField(body, "reply_to") ?? null,
          client_message_id: stringField(body, "client_message_id") ?? null,
        }],
      });
      return json(posted, posted!.duplicate ? 200 : 201);
    }],
    ["POST", /^\/api\/topics\/([^/]+)\/close$/, async (request, _, [id]) => {
      const body = request.headers.get("content-length") === "0" || request.body === null
        ? {}
        : await readJsonObject(request, deps.maxBodyBytes);
      const closed = await closeTopic(bus, { topicId: id!, reason: stringField(body, "reason") });
      return json({ topic: topicSummary(bus, id!), warnings: closed.warnings });
    }],
    ["GET", /^\/api\/topics\/([^/]+)\/export$/, (_, url, [id]) => {
      const format = new Query(url).choice("format", ["markdown", "json"] as const, "markdown");
      const topic = topicSummary(bus, id!);
      const messages = exportMessages(bus, id!);
      const file = `${topic.name.replace(/[^\w.-]+/g, "_").slice(0, 100) || topic.topic_id}`;
      const [body, type, ext] = format === "json"
        ? [exportJson(topic, messages), "application/json", "json"]
        : [exportMarkdown(topic, messages), "text/markdown", "md"];
      return new Response(`${body}\n`, {
        headers: {
          "content-type": `${type}; charset=utf-8`,
          "content-disposition": `attachment; filename="${file}.${ext}"`,
          "cache-control": "no-store",
        },
      });
    }],
    ["GET", /^\/api\/presence$/, (_, url) => {
      const window = new Query(url).int("window_seconds", {
        min: 1,
        max: 86_400,
        fallback: PRESENCE_WINDOW_SECONDS,
      });
      return json(presenceOverview(bus, { windowSeconds: window }));
    }],
    ["GET", /^\/api\/search$/, async (_, url) => {
      const query = new Query(url);
      const q = query.string("q", 10_000);
      if (q === undefined) throw invalidArgument("q is required");
      return json(
        await search.search({
          query: q,
          mode: query.choice("mode", ["hybrid", "fts", "semantic"] as const, "hybrid"),
          limit: query.int("limit", { min: 1, max: MAX_SEARCH_LIMIT, fallback: 20 }),
          topicId: query.string("topic_id", 64),
          sender: query.string("sender", 200),
          includeContent: false,
        }),
      );
    }],
  ];

  return async (request, url) => {
    let known = false;
    for (const [method, pattern, handler] of routes) {
      const match = pattern.exec(url.pathname);
      if (!match) continue;
      known = true;
      if (method !== request.method) continue;
      return await handler(request, url, match.slice(1).map(decodePathPart));
    }
    if (known) throw new BusError("METHOD_NOT_ALLOWED", `${request.method} is not allowed`);
    throw new BusError("NOT_FOUND", `No API route ${url.pathname}; see /api/openapi.json`);
  };
}

/** A percent-decoded path segment; a malformed one is a bad argument, not a crash. */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalidArgument(`Malformed percent-encoding in "${part}"`);
  }
}

const SORTS = ["activity", "created", "name"] as const;

function listTopics(bus: Bus, query: Query): Response {
  const status = query.choice("status", ["open", "closed", "all"] as const, "all");
  const name = query.string("q", 200)?.toLowerCase();
  const sort = query.choice("sort", SORTS, "activity");
  const limit = query.int("limit", { min: 1, max: MAX_TOPIC_LIST, fallback: 200 });
  const all = topicSummaries(bus, { status, limit: MAX_TOPIC_LIST })
    .filter((t) => name === undefined || t.name.toLowerCase().includes(name));
  const order: Record<typeof sort, (a: TopicSummary, b: TopicSummary) => number> = {
    activity: (a, b) => lastActive(b) - lastActive(a),
    created: (a, b) => b.created_at - a.created_at,
    name: (a, b) => a.name.localeCompare(b.name),
  };
  const topics = all.sort(order[sort]).slice(0, limit);
  return json({ topics, count: topics.length, total: all.length });
}

function lastActive(topic: TopicSummary): number {
  return Math.max(topic.last_message_at ?? 0, topic.created_at, topic.closed_at ?? 0);
}
