/**
 * One description per operation: a REST route that does what a tool does
 * accepts and refuses exactly the same arguments (a shared table of cases,
 * run through the MCP tool and through the route, in process), and the
 * OpenAPI document describes the routes as they are (every documented
 * route answers, every documented parameter is accepted).
 */

import assert from "node:assert/strict";
import { guardPolicy } from "../../lib/transports/http/guard.ts";
import { createHttpHandler } from "../../lib/transports/http/handler.ts";
import type { TestBus } from "../_helpers/bus.ts";
import { connectAgent, post } from "../_helpers/chat.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

type Args = Record<string, unknown>;

/** A tool and the route that does the same, and how each is called with `args`. */
interface Pair {
  tool: string;
  /** The profile that has the tool (default peer). */
  profile?: "chatbus";
  toolArgs(args: Args, topicId: string): Args;
  route(args: Args, topicId: string): Request;
  cases: Args[];
}

const BASE = "http://127.0.0.1:8765";
const HOST = { host: "127.0.0.1:8765" };

const postJson = (path: string, body: unknown) =>
  new Request(`${BASE}${path}`, {
    method: "POST",
    headers: { ...HOST, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const getQuery = (path: string, args: Args) => {
  const url = new URL(`${BASE}${path}`);
  for (const [key, value] of Object.entries(args)) url.searchParams.set(key, String(value));
  return new Request(url, { headers: HOST });
};

const long = (n: number) => "x".repeat(n);

const PAIRS: Pair[] = [
  {
    tool: "topic_create",
    toolArgs: (args) => args,
    route: (args) => postJson("/api/topics", args),
    cases: [
      { name: "parity" },
      { name: "parity", mode: "new" },
      { name: "parity", metadata: { a: 1 } },
      { name: long(201) },
      { name: "x", mode: "sometimes" },
      { name: "x", metadata: [1] },
      { name: 5 },
      { name: "x", unknown: 1 },
    ],
  },
  {
    tool: "topic_close",
    toolArgs: (args, topicId) => ({ topic_id: topicId, ...args }),
    route: (args, topicId) => postJson(`/api/topics/${topicId}/close`, args),
    cases: [{ reason: long(2001) }, { reason: 7 }, { extra: true }, { reason: "done" }],
  },
  {
    tool: "messages_search",
    toolArgs: (args) => args,
    route: (args) => getQuery("/api/search", args),
    cases: [
      { query: "parity" },
      { query: "parity", mode: "fts", limit: 5 },
      { query: "parity", include_content: true },
      { query: `parity ${long(12_000)}` },
      { query: long(16_385) },
      { query: "parity", limit: 0 },
      { query: "parity", limit: 101 },
      { query: "parity", mode: "fuzzy" },
      { query: "   " },
      { query: "parity", since: "not a date" },
      { query: "parity", bogus: "x" },
      {},
    ],
  },
  {
    tool: "topic_list",
    toolArgs: (args) => args,
    route: (args) => getQuery("/api/topics", args),
    cases: [
      {},
      { status: "all", limit: 10 },
      { status: "maybe" },
      { limit: 0 },
      { limit: 1001 },
    ],
  },
  {
    tool: "sync",
    toolArgs: (args, topicId) => ({ topic_id: topicId, outbox: [args], wait_seconds: 0 }),
    route: (args, topicId) => postJson(`/api/topics/${topicId}/messages`, args),
    cases: [
      { content_markdown: "parity post" },
      { content_markdown: "typed", message_type: "question", client_message_id: "c-1" },
      { content_markdown: long(65_537) },
      { content_markdown: "   " },
      { content_markdown: "x", message_type: long(33) },
      { content_markdown: "x", reply_to: "no-such-message" },
      { content_markdown: "x", metadata: "not an object" },
      { content: "the wrong field name" },
    ],
  },
  {
    tool: "thread_set_state",
    profile: "chatbus",
    toolArgs: (args, topicId) => ({ thread_id: topicId, ...args }),
    route: (args, topicId) => postJson(`/api/threads/${topicId}/state`, args),
    cases: [{ state: "review" }, { state: "closed" }, { state: 5 }, {}, { state: "done", x: 1 }],
  },
  {
    tool: "thread_close",
    profile: "chatbus",
    toolArgs: (args, topicId) => ({ thread_id: topicId, ...args }),
    route: (args, topicId) => postJson(`/api/threads/${topicId}/close`, args),
    cases: [{ summary: long(16_385) }, { summary: 3 }, { summary: "shipped" }, {}],
  },
  {
    tool: "thread_archive",
    profile: "chatbus",
    toolArgs: (args, topicId) => ({ thread_id: topicId, ...args }),
    route: (args, topicId) => postJson(`/api/threads/${topicId}/archive`, args),
    cases: [{}],
  },
  // AgentChatBus's REST routes (lib/console/chatbus/).
  {
    tool: "thread_list",
    profile: "chatbus",
    toolArgs: (args) => args,
    route: (args) => getQuery("/api/threads", args),
    cases: [{}, { status: "discuss" }, { status: "nope" }, { limit: -1 }, { limit: 5 }],
  },
  {
    tool: "msg_post",
    profile: "chatbus",
    // (REST issues the sync context the tool needs; the cases differ in everything else.)
    toolArgs: (args, topicId) => ({ thread_id: topicId, author: "human", ...args }),
    route: (args, topicId) => postJson(`/api/threads/${topicId}/messages`, args),
    cases: [
      { content: long(65_537) },
      { content: "x", priority: "whenever" },
      { content: "x", role: "boss" },
      { content: "x", reply_to_msg_id: "no-such-message" },
      { content: "x", metadata: { stop_reason: "bored" } },
      { content: 5 },
    ],
  },
  {
    tool: "agent_register",
    profile: "chatbus",
    toolArgs: (args) => ({ ide: "X", model: "y", ...args }),
    route: (args) => postJson("/api/agents/register", { ide: "X", model: "y", ...args }),
    cases: [{}, { ide: long(101) }, { skills: [{ id: "s" }] }, { capabilities: "all" }],
  },
  {
    tool: "thread_settings_update",
    profile: "chatbus",
    toolArgs: (args, topicId) => ({ thread_id: topicId, ...args }),
    route: (args, topicId) => postJson(`/api/threads/${topicId}/settings`, args),
    cases: [{}, { auto_administrator_enabled: false }, { auto_administrator_enabled: true }, {
      timeout_seconds: 10,
    }, { timeout_seconds: 60 }],
  },
  {
    tool: "agent_heartbeat",
    profile: "chatbus",
    toolArgs: (args) => args,
    route: (args) => postJson("/api/agents/heartbeat", args),
    cases: [{}, { agent_id: "a" }, { agent_id: long(200), token: "t" }],
  },
];

/** The HTTP handler of `bus`'s runtime, in process. */
function handlerFor(bus: TestBus) {
  return createHttpHandler({
    deps: { bus, search: bus.runtime.search },
    policy: guardPolicy("127.0.0.1", {}),
    maxBodyBytes: 1 << 20,
    sessionIdleMs: 60_000,
    jsonResponse: undefined,
  });
}

/** The error code of a tool result or a REST answer, or undefined when it succeeded. */
type Outcome = string | undefined;

Deno.test("each REST route accepts and refuses exactly what its tool does", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using mcp = await connectInProcess(path, "peer");
  await using chat = await connectInProcess(path, "chatbus");
  const handler = handlerFor(mcp.bus);
  try {
    const created = await mcp.client.callTool({ name: "topic_create", arguments: { name: "p" } });
    const topicId = (created.structuredContent as { topic_id: string }).topic_id;
    await mcp.client.callTool({
      name: "topic_join",
      arguments: { topic_id: topicId, agent_name: "operator" },
    });
    let compared = 0;
    for (const pair of PAIRS) {
      for (const args of pair.cases) {
        const client = pair.profile === "chatbus" ? chat.client : mcp.client;
        const result = await client.callTool({
          name: pair.tool,
          arguments: pair.toolArgs(args, topicId),
        });
        const viaTool: Outcome = result.isError
          ? (result.structuredContent as { error: { code: string } }).error.code
          : undefined;
        const response = await handler.handle(pair.route(args, topicId));
        const body = await response.json();
        const viaRoute: Outcome = response.ok ? undefined : body.error.code;
        assert.equal(
          viaRoute,
          viaTool,
          `${pair.tool} ${JSON.stringify(args).slice(0, 80)}: tool ${viaTool ?? "ok"}, ` +
            `route ${viaRoute ?? "ok"} (${JSON.stringify(body).slice(0, 200)})`,
        );
        compared++;
      }
    }
    assert.ok(compared >= 30);
  } finally {
    await handler.close();
  }
});

Deno.test("the OpenAPI document describes routes that exist and take what it says", async () => {
  await using tmp = await tmpDir();
  await using mcp = await connectInProcess(`${tmp.path}/bus.sqlite`, "peer");
  const handler = handlerFor(mcp.bus);
  try {
    const created = await mcp.client.callTool({ name: "topic_create", arguments: { name: "d" } });
    const topicId = (created.structuredContent as { topic_id: string }).topic_id;
    await using chat = await connectInProcess(`${tmp.path}/bus.sqlite`, "chatbus");
    const agent = await connectAgent(chat, "d");
    const imageId = (await post(agent, "a picture", {
      metadata: { attachments: [{ type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }] },
    })).msg_id as string;
    const doc = await (await handler.handle(
      new Request(`${BASE}/api/openapi.json`, {
        headers: HOST,
      }),
    )).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    // AgentChatBus's routes take an agent's credentials, and ids of agents and templates.
    const registered = await (await handler.handle(
      postJson("/api/agents/register", { ide: "docs", model: "m" }),
    )).json() as { agent_id: string; token: string };
    const idFor = (template: string) =>
      template.startsWith("/api/agents/")
        ? registered.agent_id
        : template.startsWith("/api/templates/")
        ? "code-review"
        : template.startsWith("/api/messages/")
        ? imageId
        : topicId;
    let operations = 0;
    for (const [template, methods] of Object.entries(doc.paths)) {
      if (template === "/api/events") continue; // a stream: tested in events_test.ts
      for (const [method, op] of Object.entries(methods)) {
        const path = template.replace("{id}", idFor(template)).replace("{message_id}", imageId)
          .replace("{n}", "0");
        const url = new URL(`${BASE}${path}`);
        for (const parameter of op.parameters ?? []) {
          // after_seq and before_seq exclude each other (the route says so); after_seq is tried.
          if (parameter.in === "query" && parameter.name !== "before_seq") {
            const credential = (registered as Record<string, string>)[parameter.name];
            url.searchParams.set(
              parameter.name,
              credential ?? example(parameter.name, parameter.schema),
            );
          }
        }
        if (method === "delete" && template === "/api/templates/{id}") {
          url.pathname = "/api/templates/example"; // (the custom one POST /api/templates made)
        }
        if (method === "delete" && template.startsWith("/api/threads/")) {
          // (A deletion gets a topic of its own: the others are still to be tried on this one.)
          const doomed = await mcp.client.callTool({
            name: "topic_create",
            arguments: { name: "doomed" },
          });
          url.pathname = template.replace(
            "{id}",
            (doomed.structuredContent as { topic_id: string }).topic_id,
          );
        }
        const body = op.requestBody
          ? withCredentials(
            exampleBody(op.requestBody.content["application/json"].schema),
            registered,
          )
          : undefined;
        // (An edit needs its text under one of two names, so the schema cannot require either.)
        if (method === "put" && template === "/api/messages/{id}") {
          Object.assign(body!, { new_content: "edited", edited_by: "system" });
        }
        // (A rename to the example topic would meet the thread POST /api/threads made.)
        if (template === "/api/threads/{id}/rename") Object.assign(body!, { topic: "renamed" });
        const headers: Record<string, string> = { ...HOST, "x-agent-token": registered.token };
        if (body) headers["content-type"] = "application/json";
        // The upload takes a multipart image, not JSON.
        const upload = template === "/api/upload/image" ? new FormData() : undefined;
        upload?.set(
          "file",
          new File([Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10)], "a.png"),
        );
        const response = await handler.handle(
          new Request(url, {
            method: method.toUpperCase(),
            headers,
            body: upload ?? (body ? JSON.stringify(body) : undefined),
          }),
        );
        const text = await response.text();
        assert.ok(
          response.status < 400,
          `${method.toUpperCase()} ${template} with every documented parameter: ` +
            `${response.status} ${text.slice(0, 300)}`,
        );
        operations++;
      }
    }
    assert.ok(operations >= 9, "every route was tried");
  } finally {
    await handler.close();
  }
});

/** An example body with the agent's real credentials where it names an agent. */
function withCredentials(
  body: Record<string, unknown>,
  agent: { agent_id: string; token: string },
): Record<string, unknown> {
  const filled = { ...body };
  if ("agent_id" in filled) filled.agent_id = agent.agent_id;
  if ("token" in filled) filled.token = agent.token;
  if ("creator_agent_id" in filled) filled.creator_agent_id = agent.agent_id;
  if ("template" in filled) filled.template = "code-review";
  return filled;
}

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  default?: unknown;
}

interface Operation {
  parameters?: { name: string; in: string; schema: Schema }[];
  requestBody?: { content: { "application/json": { schema: Schema } } };
}

/** A valid value for a documented parameter. */
function example(name: string, schema: Schema): string {
  if (schema.default !== undefined) return String(schema.default);
  if (schema.enum) return String(schema.enum[0]);
  const types = [schema.type ?? [], ...(schema.anyOf ?? []).map((s) => s.type ?? [])].flat();
  if (types.includes("integer") || types.includes("number")) {
    return String(schema.minimum ?? 1);
  }
  if (types.includes("boolean")) return "false";
  return ["since", "until", "before"].includes(name) ? "2026-01-01" : "example";
}

/** A body with every required field of a documented schema. */
function exampleBody(schema: Schema): Record<string, unknown> {
  return Object.fromEntries(
    (schema.required ?? []).map((name) => [name, example(name, schema.properties![name]!)]),
  );
}
