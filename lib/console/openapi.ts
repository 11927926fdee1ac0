/**
 * The OpenAPI 3.1 description of the console's REST API and event stream,
 * served at `/api/openapi.json`.
 *
 * @module
 */

import { PACKAGE_VERSION } from "../version.ts";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonOf = (schema: unknown) => ({ content: { "application/json": { schema } } });
const ok = (description: string, schema: unknown) => ({ description, ...jsonOf(schema) });
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [String(status), { $ref: `#/components/responses/E${status}` }]),
  );
const topicId = { name: "id", in: "path", required: true, schema: { type: "string" } };
const int = (name: string, description: string, max?: number) => ({
  name,
  in: "query",
  description,
  schema: { type: "integer", minimum: 0, ...(max ? { maximum: max } : {}) },
});

/** The document. */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "agent-bus console API",
      version: PACKAGE_VERSION,
      description:
        "Read and join the agents' conversations. Errors are {error: {code, message}} with the " +
        "MCP tools' codes (INVALID_ARGUMENT, TOPIC_NOT_FOUND, TOPIC_CLOSED, ...) plus NOT_FOUND, " +
        "METHOD_NOT_ALLOWED, UNSUPPORTED_MEDIA_TYPE and PAYLOAD_TOO_LARGE. POST bodies must be " +
        "application/json. When the server has a token, send it as a bearer token (or open " +
        "/?token=... once in a browser, which sets a same-site cookie).",
    },
    paths: {
      "/api/topics": {
        get: {
          summary: "List topics with message counts, last activity and presence counts",
          parameters: [
            { name: "status", in: "query", schema: { enum: ["open", "closed", "all"] } },
            { name: "q", in: "query", description: "Part of the name", schema: { type: "string" } },
            { name: "sort", in: "query", schema: { enum: ["activity", "created", "name"] } },
            int("limit", "Most topics (default 200)", 1000),
          ],
          responses: {
            "200": ok("Topics", {
              type: "object",
              properties: {
                topics: { type: "array", items: ref("TopicSummary") },
                count: { type: "integer" },
                total: { type: "integer" },
              },
            }),
            ...errors(400),
          },
        },
        post: {
          summary: "Open a topic (reuses an open one of the same name unless new=true)",
          requestBody: jsonOf({
            type: "object",
            properties: { name: { type: "string" }, new: { type: "boolean" } },
          }),
          responses: {
            "200": ok("Reused", ref("TopicCreated")),
            "201": ok("Created", ref("TopicCreated")),
            ...errors(400, 415),
          },
        },
      },
      "/api/topics/{id}": {
        get: {
          summary: "A topic, who is present, and its latest messages",
          parameters: [topicId, int("messages", "How many latest messages (default 50)", 500)],
          responses: {
            "200": ok("The topic", {
              type: "object",
              properties: {
                topic: ref("TopicSummary"),
                presence: { type: "array", items: ref("PresentAgent") },
                messages: { type: "array", items: ref("Message") },
                has_more: { type: "boolean" },
              },
            }),
            ...errors(400, 404),
          },
        },
      },
      "/api/topics/{id}/messages": {
        get: {
          summary: "A page of messages, oldest first",
          parameters: [
            topicId,
            int("after_seq", "Messages after this seq"),
            int("before_seq", "The newest messages before this seq"),
            int("limit", "Most messages (default 100)", 500),
          ],
          responses: {
            "200": ok("Messages", {
              type: "object",
              properties: {
                topic_id: { type: "string" },
                messages: { type: "array", items: ref("Message") },
                has_more: { type: "boolean" },
              },
            }),
            ...errors(400, 404),
          },
        },
        post: {
          summary: "Post a message (as `operator` unless `sender` is given)",
          parameters: [topicId],
          requestBody: jsonOf({
            type: "object",
            required: ["content_markdown"],
            properties: {
              content_markdown: { type: "string" },
              sender: { type: "string" },
              message_type: { type: "string" },
              reply_to: { type: "string" },
              client_message_id: { type: "string" },
            },
          }),
          responses: {
            "200": ok("Already posted with this client_message_id", ref("Posted")),
            "201": ok("Posted", ref("Posted")),
            ...errors(400, 404, 409, 413, 415),
          },
        },
      },
      "/api/topics/{id}/close": {
        post: {
          summary: "Close a topic",
          parameters: [topicId],
          requestBody: jsonOf({ type: "object", properties: { reason: { type: "string" } } }),
          responses: { "200": ok("Closed", ref("TopicCreated")), ...errors(400, 404, 415) },
        },
      },
      "/api/topics/{id}/export": {
        get: {
          summary: "The whole topic as a file",
          parameters: [topicId, {
            name: "format",
            in: "query",
            schema: { enum: ["markdown", "json"] },
          }],
          responses: {
            "200": {
              description: "Markdown or JSON, as an attachment",
              content: { "text/markdown": {}, "application/json": {} },
            },
            ...errors(400, 404),
          },
        },
      },
      "/api/search": {
        get: {
          summary: "Search every message (the messages_search engine)",
          parameters: [
            { name: "q", in: "query", required: true, schema: { type: "string" } },
            { name: "mode", in: "query", schema: { enum: ["hybrid", "fts", "semantic"] } },
            { name: "topic_id", in: "query", schema: { type: "string" } },
            { name: "sender", in: "query", schema: { type: "string" } },
            int("limit", "Most results (default 20)", 100),
          ],
          responses: {
            "200": ok("Results; snippets mark hits with « and »", { type: "object" }),
            ...errors(400),
          },
        },
      },
      "/api/presence": {
        get: {
          summary: "Agents present in every topic, and whether their sync is waiting",
          parameters: [int("window_seconds", "Presence window (default 300)", 86400)],
          responses: { "200": ok("Presence", { type: "object" }), ...errors(400) },
        },
      },
      "/api/events": {
        get: {
          summary: "Server-Sent Events: message, topic, presence, ready, reset",
          description: "Each event id is the position of the newest message sent; reconnect " +
            "with Last-Event-ID (or ?last_event_id=) to get what was missed. Keep-alive " +
            "comments every 15 s.",
          parameters: [
            { name: "topic_id", in: "query", schema: { type: "string" } },
            int("last_event_id", "Resume after this event id"),
          ],
          responses: {
            "200": { description: "An event stream", content: { "text/event-stream": {} } },
          },
        },
      },
    },
    components: {
      responses: Object.fromEntries(
        [400, 401, 403, 404, 409, 413, 415].map((status) => [`E${status}`, {
          description: `Error (${status})`,
          ...jsonOf(ref("Error")),
        }]),
      ),
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: { code: { type: "string" }, message: { type: "string" } },
            },
          },
        },
        TopicSummary: {
          type: "object",
          properties: {
            topic_id: { type: "string" },
            name: { type: "string" },
            status: { enum: ["open", "closed"] },
            created_at: { type: "number" },
            closed_at: { type: ["number", "null"] },
            close_reason: { type: ["string", "null"] },
            metadata: { type: ["object", "null"] },
            messages: { type: "integer" },
            last_seq: { type: "integer" },
            last_message_at: { type: ["number", "null"] },
            active_agents: { type: "integer" },
          },
        },
        TopicCreated: {
          type: "object",
          properties: { topic: ref("TopicSummary"), reused: { type: "boolean" } },
        },
        Message: {
          type: "object",
          properties: {
            message_id: { type: "string" },
            topic_id: { type: "string" },
            seq: { type: "integer" },
            sender: { type: "string" },
            message_type: { type: "string" },
            reply_to: { type: ["string", "null"] },
            content_markdown: { type: "string" },
            metadata: { type: ["object", "null"] },
            client_message_id: { type: ["string", "null"] },
            created_at: { type: "number" },
          },
        },
        Posted: {
          type: "object",
          properties: { message: ref("Message"), duplicate: { type: "boolean" } },
        },
        PresentAgent: {
          type: "object",
          properties: {
            agent_name: { type: "string" },
            last_seq: { type: "integer" },
            updated_at: { type: "number" },
            age_seconds: { type: "number" },
            waiting: { type: "boolean", description: "Its sync is waiting for messages now" },
          },
        },
      },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
  };
}
