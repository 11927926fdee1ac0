/**
 * The OpenAPI 3.1 description of the console's REST API and event stream,
 * served at `/api/openapi.json`, generated from the routes: each route's
 * parameters and request body come from the zod schemas it validates with
 * (the same as its tool's, where it has one), so the document cannot drift
 * from what the server accepts. Response shapes are the components below;
 * where a tool answers the same thing (a message, a thread, a search) they
 * are generated from that tool's output schema.
 *
 * @module
 */

import { z } from "zod";
import { chatExtrasSchema, threadSchema } from "../bus/chat/schemas.ts";
import { messageSchema } from "../bus/schemas.ts";
import { searchResultSchema } from "../search/schema.ts";
import { PACKAGE_VERSION } from "../version.ts";
import { answerSchema, type RouteSpec } from "./route_spec.ts";
import { eventsQuery } from "./events.ts";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonOf = (schema: unknown) => ({ content: { "application/json": { schema } } });

/** The document for `routes`. */
export function openApiDocument(routes: readonly RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  paths["/api/events"] = {
    get: {
      summary: "Server-Sent Events: message, topic, presence, ready, reset",
      description: "Each event id is the position of the newest message sent; reconnect " +
        "with Last-Event-ID (or ?last_event_id=) to get what was missed. Keep-alive " +
        "comments every 15 s.",
      parameters: queryParameters(eventsQuery),
      responses: {
        "200": { description: "An event stream", content: { "text/event-stream": {} } },
        ...{ "400": { $ref: "#/components/responses/E400" } },
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "agent-bus console API",
      version: PACKAGE_VERSION,
      description:
        "Read and join the agents' conversations, and AgentChatBus's REST API (/health, " +
        "/api/metrics, /api/threads, /api/agents, /api/templates). Errors are " +
        "{error: {code, message}, detail} (detail repeats the message, as AgentChatBus answers) with the " +
        "MCP tools' codes (INVALID_ARGUMENT, TOPIC_NOT_FOUND, TOPIC_CLOSED, ...) plus NOT_FOUND, " +
        "METHOD_NOT_ALLOWED, UNSUPPORTED_MEDIA_TYPE and PAYLOAD_TOO_LARGE. POST bodies must be " +
        "application/json. When the server has a token, send it as a bearer token (or open " +
        "/?token=... once in a browser, which sets a same-site cookie).",
    },
    paths,
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
          required: ["error", "detail"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: { code: { type: "string" }, message: { type: "string" } },
            },
            detail: { type: "string", description: "The message again, where AgentChatBus has it" },
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
            thread_state: {
              type: ["string", "null"],
              description: "The chatbus thread state, when set (else discuss)",
            },
          },
        },
        TopicCreated: {
          type: "object",
          properties: { topic: ref("TopicSummary"), reused: { type: "boolean" } },
        },
        Message: outputSchema(messageSchema.extend({ chat: chatExtrasSchema.optional() })),
        Thread: outputSchema(threadSchema),
        TopicList: {
          type: "object",
          properties: {
            topics: { type: "array", items: ref("TopicSummary") },
            count: { type: "integer" },
            total: { type: "integer" },
          },
        },
        TopicView: {
          type: "object",
          properties: {
            topic: ref("TopicSummary"),
            presence: { type: "array", items: ref("PresentAgent") },
            messages: { type: "array", items: ref("Message") },
            has_more: { type: "boolean" },
          },
        },
        MessagePage: {
          type: "object",
          properties: {
            topic_id: { type: "string" },
            messages: { type: "array", items: ref("Message") },
            has_more: { type: "boolean" },
          },
        },
        TopicClosed: {
          type: "object",
          properties: {
            topic: ref("TopicSummary"),
            warnings: { type: "array", items: { type: "object" } },
          },
        },
        PresenceOverview: { type: "object" },
        // The tool's output, and what the REST answer adds: the search's warnings and
        // AgentChatBus's names (`total`, and each hit's thread_id, thread_topic, author).
        SearchResult: outputSchema(searchResultSchema.extend({
          warnings: z.array(z.object({
            code: z.string(),
            message: z.string().optional(),
            context: z.record(z.string(), z.unknown()).optional(),
          })),
          total: z.int().describe("count, under AgentChatBus's name"),
          results: z.array(searchResultSchema.shape.results.element.extend({
            thread_id: z.string().describe("topic_id, under AgentChatBus's name"),
            thread_topic: z.string().describe("topic_name, under AgentChatBus's name"),
            author: z.string().describe("sender, under AgentChatBus's name"),
          })),
        })),
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
            waiting: {
              type: "boolean",
              description: "Its sync (or msg_wait) is waiting for messages now",
            },
            typing: { type: "boolean", description: "It said it is typing (agent_set_typing)" },
          },
        },
      },
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
  };
}

function operation(route: RouteSpec): Record<string, unknown> {
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  return {
    summary: route.summary,
    parameters: [...pathParameters, ...(route.query ? queryParameters(route.query) : [])],
    ...(route.body ? { requestBody: { required: true, ...jsonOf(jsonSchema(route.body)) } } : {}),
    responses: Object.fromEntries(
      Object.entries(route.responses).map(([status, response]) => {
        const schema = answerSchema(route, Number(status));
        return [
          status,
          schema ? { ...response as object, ...jsonOf(outputSchema(schema)) } : response,
        ];
      }),
    ),
  };
}

/** One OpenAPI parameter per property of an object schema. */
function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const json = jsonSchema(schema) as {
    properties?: Record<string, { description?: string }>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: "query",
      ...(json.required?.includes(name) ? { required: true } : {}),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function outputSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: "output" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json;
}
