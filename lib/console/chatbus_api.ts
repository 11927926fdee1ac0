/**
 * AgentChatBus's REST API on the console's router, so that its scripts and
 * its VS Code extension work against agent-bus by changing the base URL:
 * `/health`, `/api/metrics`, `/api/threads` (list, create, delete, messages,
 * post, sync-context, state, close, archive, settings, agents, admin,
 * transcript, export), `/api/messages` (edit, reactions, history),
 * `/api/agents` (register, heartbeat, resume, unregister, list, get, update,
 * kick), `/api/templates` and `/api/upload/image` (its settings are in
 * `chatbus_settings.ts`, its event stream in `chatbus_events.ts`). Routes, methods, bodies,
 * status codes and JSON shapes follow AgentChatBus's server (its TS server,
 * read for this); each route validates with the zod schema of the chatbus
 * tool that does the same (`bus/chat/schemas.ts`), so a REST call and a tool
 * call accept and refuse the same input. Threads, messages and agents carry
 * AgentChatBus's `id` beside our `thread_id`, `msg_id` and `agent_id`.
 * Errors keep our `{error: {code, message}}` and add AgentChatBus's
 * `detail` (see `errorResponse`).
 *
 * @module
 */

import { z } from "zod";
import {
  agentList,
  findAgent,
  heartbeat,
  kickAgent,
  registerAgent,
  resumeAgent,
  unregisterAgent,
  updateAgentProfile,
} from "../bus/chat/agents.ts";
import {
  editHistory,
  editMessageAsOperator,
  getMessage,
  listMessages,
  react,
  unreact,
} from "../bus/chat/read.ts";
import { postMessage } from "../bus/chat/post.ts";
import {
  agentCredentialsInput,
  agentIdArg,
  agentRegisterInput,
  agentUpdateInput,
  msgListInput,
  msgPostInput,
  reactionInput,
  templateCreateInput,
  threadCreateInput,
  threadListInput,
  threadSettingsUpdateInput,
} from "../bus/chat/schemas.ts";
import {
  createThread,
  requireTemplate,
  templateCreate,
  templateDelete,
  templateList,
  type Thread,
  threadDelete,
  threadGet,
  threadList,
  threadParticipants,
  threadRename,
  threadSetState,
  threadSettings,
  threadSyncContext,
  threadWaiters,
  updateThreadSettings,
} from "../bus/chat/threads.ts";
import { chatMetrics } from "../bus/chat/metrics.ts";
import type { Bus } from "../bus/mod.ts";
import { Session } from "../bus/session.ts";
import { MAX_ATTACHMENTS, sniffRasterImage } from "../bus/chat/attachments.ts";
import { BusError, invalidArgument } from "../errors.ts";
import { json, readCappedBody } from "../http_respond.ts";
import { PACKAGE_VERSION } from "../version.ts";
import { chatbusExportFile } from "./export_file.ts";
import { ok, route, type RouteSpec } from "./route_spec.ts";
import { restAgent, restMessage, restThread } from "./chatbus_shapes.ts";

/**
 * One page of `GET /api/threads`. AgentChatBus answers every thread at once
 * (its extension and web UI never ask for a second page), so REST is bound
 * by what a browser takes in one JSON document, not by the tool result
 * budget: 10,000 threads or 8 MiB of thread text, whichever comes first;
 * beyond it `has_more` and `next_cursor` lead on.
 */
export const REST_THREAD_PAGE = { maxThreads: 10_000, maxBytes: 8 << 20 } as const;

/** Most tries of a REST post that brought no sync context and met a concurrent post. */
const AUTO_SYNC_TRIES = 3;

/** `GET /api/threads/{id}/messages`: `msg_list`'s arguments with REST's defaults. */
const messagesQuery = msgListInput.omit({
  thread_id: true,
  return_format: true,
  include_attachments: true,
}).extend({
  // (Larger limits are cut to 1000, as AgentChatBus does.)
  limit: z.int().min(1, "must be an int >= 1").default(200).transform((n) => Math.min(n, 1000)),
  include_system_prompt: z.boolean().default(false),
});

/** `GET /api/threads/{id}/transcript`: the same, with the transcript's larger page. */
const transcriptQuery = messagesQuery.extend({
  limit: z.int().min(1, "must be an int >= 1").default(400).transform((n) => Math.min(n, 2000)),
});

/** `POST /api/threads`: `thread_create`'s fields, the creator's token in `X-Agent-Token`. */
const createThreadBody = threadCreateInput.omit({ agent_id: true, token: true }).extend({
  creator_agent_id: agentIdArg.describe("The creating agent (its token in X-Agent-Token)"),
});

/** `POST /api/agents/register`: `agent_register`'s fields; ide and model default as there. */
const registerBody = agentRegisterInput.partial({ ide: true, model: true });

/** The AgentChatBus routes. */
export function chatbusRoutes(
  bus: Bus,
  { startedAt, eventStreams }: { startedAt: number; eventStreams: () => number },
): RouteSpec[] {
  const routes = [
    route({
      method: "GET",
      path: "/health",
      summary: "Liveness, as AgentChatBus answers it (its VS Code extension probes this)",
      responses: { "200": { description: "Healthy" } },
      handle: () => json(health()),
    }),
    route({
      method: "GET",
      path: "/api/metrics",
      summary: "Uptime, threads by status, message totals and rates, agents online",
      responses: { "200": { description: "AgentChatBus's metrics" } },
      handle: () => json({ ...health(), ...metrics(bus, startedAt) }),
    }),
    route({
      method: "GET",
      path: "/api/debug/sse-status",
      summary: "How many event streams are open (/events and /api/events), as AgentChatBus " +
        "answers (on a node on PostgreSQL, those of the session worker that answers)",
      responses: { "200": { description: "{subscribers}" } },
      handle: () => json({ subscribers: eventStreams() }),
    }),
    route({
      method: "GET",
      path: "/api/threads",
      summary: "Threads, newest first (the thread_list tool), each with who waits in it; all " +
        "of them without a limit, as AgentChatBus answers, up to 10,000 threads or 8 MiB a page",
      query: threadListInput,
      responses: { "200": { description: "{threads, total, has_more, next_cursor}" } },
      handle: ({ query }) => {
        // (An unencoded "+00:00" arrives as " 00:00", in a date or a next_cursor "date~n":
        // clients put them in URLs as they are.)
        const before = query.before?.replace(/ (\d\d:\d\d(?:~\d+)?)$/, "+$1");
        const page = threadList(bus, { ...query, before }, REST_THREAD_PAGE);
        return json({ ...page, threads: withWaiters(bus, page.threads) });
      },
    }),
    route({
      method: "POST",
      path: "/api/threads",
      summary:
        "Create a thread as a registered agent (the thread_create tool; token in X-Agent-Token)",
      body: createThreadBody,
      responses: { "201": { description: "The thread and its first sync context" } },
      handle: async ({ request, body }) => {
        const token = request.headers.get("x-agent-token");
        if (!token) {
          throw new BusError(
            "AUTHENTICATION_REQUIRED",
            "X-Agent-Token header required to create thread as a registered agent",
          );
        }
        const { thread, sync } = await createThread(bus, new Session({}), {
          topic: body.topic,
          agentId: body.creator_agent_id,
          token,
          metadata: body.metadata,
          system_prompt: body.system_prompt,
          template: body.template,
        });
        return json({ ...restThread(thread), ...sync }, 201);
      },
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/messages",
      summary: "A thread's messages after after_seq (the msg_list tool, as JSON)",
      query: messagesQuery,
      responses: { "200": { description: "An array of messages" } },
      handle: ({ params: { id }, query }) => messagesResponse(bus, id!, query),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/messages",
      summary: "Post to a thread (the msg_post tool); without expected_last_seq and reply_token " +
        "the server issues a sync context for the post; images are kept as attachments and " +
        "listed in metadata.images",
      body: msgPostInput(bus.config).omit({ thread_id: true }).extend({
        author: msgPostInput(bus.config).shape.author.default("human"),
        images: z.array(z.record(z.string(), z.unknown())).max(MAX_ATTACHMENTS).optional()
          .describe(
            "Images as AgentChatBus's chat panel sends them ({url: data URL from " +
              "/api/upload/image, name}); kept as the message's attachments",
          ),
      }),
      responses: { "201": { description: "The stored message" } },
      handle: async ({ params: { id }, body }) => await post(bus, id!, body),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/transcript",
      summary: "The human view of a thread: its messages (there are no human-only entries here)",
      query: transcriptQuery,
      responses: { "200": { description: "An array of messages" } },
      handle: ({ params: { id }, query }) => messagesResponse(bus, id!, query),
    }),
    route({
      method: "GET",
      path: "/api/messages/{id}/reactions",
      summary: "A message's reactions",
      responses: { "200": { description: "{reactions}" } },
      handle: ({ params: { id } }) => json({ reactions: requireChatMessage(bus, id!).reactions }),
    }),
    route({
      method: "POST",
      path: "/api/messages/{id}/reactions",
      summary: "React to a message for agent_id (the msg_react tool; without a token the " +
        "operator reacts for the agent, as AgentChatBus's REST does)",
      body: reactionInput.omit({ message_id: true }).required({ agent_id: true }),
      responses: { "201": { description: "{ok, reactions}" } },
      handle: async ({ params: { id }, body }) => {
        const reaction = await react(bus, new Session({}), {
          ...body,
          message_id: id!,
          asOperator: true,
        });
        const { reactions } = requireChatMessage(bus, id!);
        return json({ ok: true, ...reaction, reactions }, 201);
      },
    }),
    route({
      method: "DELETE",
      path: "/api/messages/{id}/reactions/{reaction}",
      summary: "Take back agent_id's reaction (the msg_unreact tool)",
      query: reactionInput.pick({ agent_id: true, token: true }).required({ agent_id: true }),
      responses: { "200": { description: "{removed}" } },
      handle: async ({ params: { id, reaction }, query }) => {
        const removed = await unreact(bus, new Session({}), {
          ...query,
          message_id: id!,
          reaction: reaction!,
          asOperator: true,
        });
        return json({ removed: removed.removed });
      },
    }),
    route({
      method: "PUT",
      path: "/api/messages/{id}",
      summary: "Edit a message for edited_by, its author or system (the msg_edit tool); " +
        "new_content, or content as AgentChatBus's reference names it",
      body: editBody(bus),
      responses: {
        "200": { description: "{msg_id, version, edited_at, edited_by} or {no_change}" },
      },
      handle: async ({ params: { id }, body }) => {
        const content = body.new_content ?? body.content;
        if (content === undefined) throw invalidArgument("new_content is required");
        return json(
          await editMessageAsOperator(bus, {
            message_id: id!,
            new_content: content,
            edited_by: body.edited_by,
          }),
        );
      },
    }),
    route({
      method: "GET",
      path: "/api/messages/{id}/history",
      summary: "A message's earlier versions, oldest first (the msg_edit_history tool)",
      responses: { "200": { description: "{edits}" } },
      handle: ({ params: { id } }) => json(editHistory(bus, id!)),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/sync-context",
      summary: "A fresh sync context (current_seq, reply_token) bound to no agent",
      responses: { "200": { description: "{current_seq, reply_token, reply_window}" } },
      handle: async ({ params: { id } }) =>
        json(await threadSyncContext(bus, new Session({}), id!)),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/settings",
      summary: "A thread's coordination settings (the thread_settings_get tool)",
      responses: { "200": { description: "The settings" } },
      handle: ({ params: { id } }) => json(threadSettings(bus, id!)),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/settings",
      summary: "Update a thread's settings (the thread_settings_update tool: what maps onto " +
        "agent-bus); auto_coordinator_enabled is read as auto_administrator_enabled",
      body: threadSettingsUpdateInput.omit({ thread_id: true }).extend({
        auto_coordinator_enabled: z.boolean().optional().describe(
          "Older name of auto_administrator_enabled",
        ),
      }),
      responses: { "200": { description: "The settings" } },
      handle: ({ params: { id }, body }) =>
        json(
          updateThreadSettings(bus, {
            ...body,
            auto_administrator_enabled: body.auto_administrator_enabled ??
              body.auto_coordinator_enabled,
            thread_id: id!,
          }),
        ),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/admin",
      summary: "The thread's administrator: its creator (there is no auto-assigned one here)",
      responses: {
        "200": { description: "{admin_id, admin_name, admin_emoji, admin_type, assigned_at}" },
      },
      handle: ({ params: { id } }) => {
        const thread = threadGet(bus, id!);
        const admin = thread.creator_admin_id === null
          ? undefined
          : findAgent(bus, thread.creator_admin_id);
        return json({
          admin_id: thread.creator_admin_id,
          admin_name: admin?.display_name ?? null,
          admin_emoji: admin?.emoji ?? null,
          admin_type: thread.creator_admin_id === null ? null : "creator",
          assigned_at: thread.creator_admin_id === null ? null : thread.created_at,
        });
      },
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/rename",
      summary: "Rename a thread; a topic another thread has is refused (409)",
      body: z.object({ topic: threadCreateInput.shape.topic }),
      responses: { "200": { description: "{ok: true, thread}" } },
      handle: async ({ params: { id }, body }) =>
        json({ ok: true, thread: restThread(await threadRename(bus, id!, body.topic)) }),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/export",
      summary: "The thread as a Markdown file, as AgentChatBus writes it (Content-Disposition: " +
        "attachment)",
      responses: { "200": { description: "Markdown", content: { "text/markdown": {} } } },
      handle: ({ params: { id } }) => chatbusExportFile(bus, id!),
    }),
    route({
      method: "DELETE",
      path: "/api/threads/{id}",
      summary: "Delete a thread and everything in it (the thread_delete tool)",
      responses: { "200": { description: "{ok: true, deleted}" } },
      handle: async ({ params: { id } }) => {
        await threadDelete(bus, id!, true);
        return json({ ok: true, deleted: id });
      },
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/agents",
      summary: "A thread's participants: its creator, the agents that posted, those waiting",
      responses: { "200": { description: "An array of agents" } },
      handle: ({ params: { id } }) => {
        const ids = new Set(threadParticipants(bus, id!));
        return json(agentList(bus).filter((agent) => ids.has(agent.agent_id)).map(restAgent));
      },
    }),
    route({
      method: "POST",
      path: "/api/upload/image",
      summary: "Upload an image (multipart field `file`) to attach to a post: PNG, JPEG, GIF, " +
        "WebP, AVIF or BMP by its bytes, at most AGENT_BUS_MAX_ATTACHMENT_BYTES; answered as a " +
        "data URL, never stored or served",
      responses: { "200": { description: "{url: data URL, name}" } },
      handle: async ({ request }) =>
        json(await uploadedImage(request, bus.config.maxAttachmentBytes)),
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/unarchive",
      summary: "Unarchive a thread (back to discuss)",
      responses: { "200": ok("The thread", "Thread") },
      handle: async ({ params: { id } }) => json(await threadSetState(bus, id!, "discuss")),
    }),
    route({
      method: "GET",
      path: "/api/agents",
      summary: "Every registered agent (the agent_list tool), without tokens",
      responses: { "200": { description: "An array of agents" } },
      handle: () => json(agentList(bus).map(restAgent)),
    }),
    route({
      method: "GET",
      path: "/api/agents/{id}",
      summary: "One agent",
      responses: { "200": { description: "The agent" } },
      handle: ({ params: { id } }) => {
        const agent = findAgent(bus, id!);
        if (!agent) throw new BusError("NOT_FOUND", "Agent not found");
        return json(restAgent(agent));
      },
    }),
    route({
      method: "PUT",
      path: "/api/agents/{id}",
      summary: "Change an agent's profile with its token (the agent_update tool)",
      body: agentUpdateInput.omit({ agent_id: true }),
      responses: { "200": { description: "The agent" } },
      handle: async ({ params: { id }, body }) => {
        const { token, ...profile } = body;
        const agent = await updateAgentProfile(bus, id!, token, profile);
        if (!agent) throw invalidCredentials();
        return json({ ok: true, ...restAgent(agent) });
      },
    }),
    route({
      method: "POST",
      path: "/api/agents/{id}/kick",
      summary: "Force an agent offline: its msg_wait calls end now (with an AGENT_KICKED " +
        "warning) and it shows offline until its next call; its session, its own process, is " +
        "not cut, and its token stays valid",
      responses: { "200": { description: "{ok, agent_id, agent_name, threads_interrupted, …}" } },
      handle: async ({ params: { id } }) => {
        const kicked = await kickAgent(bus, id!);
        if (!kicked) throw new BusError("NOT_FOUND", "Agent not found");
        const name = kicked.agent.display_name;
        const interrupted = kicked.threadsInterrupted;
        return json({
          ok: true,
          agent_id: kicked.agent.agent_id,
          agent_name: name,
          threads_interrupted: interrupted,
          sessions_disconnected_count: 0,
          message: `Agent ${name} has been kicked offline. Interrupted ${interrupted.length} ` +
            "msg_wait(s); agent-bus disconnects no sessions.",
        });
      },
    }),
    route({
      method: "POST",
      path: "/api/agents/register",
      summary: "Register an agent (the agent_register tool); the token is shown once",
      body: registerBody,
      responses: { "200": { description: "The agent and its token" } },
      handle: async ({ body }) => {
        const { agent, token } = await registerAgent(bus, body);
        return json({ ok: true, ...restAgent(agent), token });
      },
    }),
    route({
      method: "POST",
      path: "/api/agents/heartbeat",
      summary: "Keep an agent online (the agent_heartbeat tool)",
      body: agentCredentialsInput,
      responses: { "200": { description: "{ok: true}" } },
      handle: async ({ body }) => {
        if (!await heartbeat(bus, body.agent_id, body.token)) throw invalidCredentials();
        return json({ ok: true });
      },
    }),
    route({
      method: "POST",
      path: "/api/agents/resume",
      summary: "Resume an agent with its saved credentials (the agent_resume tool)",
      body: agentCredentialsInput,
      responses: { "200": { description: "The agent, online again" } },
      handle: async ({ body }) => {
        const agent = await resumeAgent(bus, body.agent_id, body.token).catch(() => {
          throw invalidCredentials();
        });
        return json({ ok: true, ...restAgent(agent) });
      },
    }),
    route({
      method: "POST",
      path: "/api/agents/unregister",
      summary: "Unregister an agent (the agent_unregister tool)",
      body: agentCredentialsInput,
      responses: { "200": { description: "{ok: true}" } },
      handle: async ({ body }) => {
        if (!await unregisterAgent(bus, body.agent_id, body.token)) throw invalidCredentials();
        return json({ ok: true });
      },
    }),
    route({
      method: "GET",
      path: "/api/templates",
      summary: "Thread templates: the built-ins and custom ones (the template_list tool)",
      responses: { "200": { description: "An array of templates" } },
      handle: () =>
        json(
          templateList(bus).map(({ id, name, description, is_builtin, created_at }) => ({
            id,
            name,
            description,
            is_builtin,
            created_at,
          })),
        ),
    }),
    route({
      method: "POST",
      path: "/api/templates",
      summary: "Create (or replace) a custom template (the template_create tool)",
      body: templateCreateInput,
      responses: { "201": { description: "The template" } },
      handle: async ({ body }) => {
        const template = await templateCreate(bus, {
          ...body,
          default_metadata: body.default_metadata ?? body.metadata,
        });
        return json(template, 201);
      },
    }),
    route({
      method: "GET",
      path: "/api/templates/{id}",
      summary: "One template (the template_get tool)",
      responses: { "200": { description: "The template" } },
      handle: ({ params: { id } }) => json(requireTemplate(bus, id!)),
    }),
    route({
      method: "DELETE",
      path: "/api/templates/{id}",
      summary: "Delete a custom template (built-in ones are refused)",
      responses: { "204": { description: "Deleted" } },
      handle: async ({ params: { id } }) => {
        await templateDelete(bus, id!);
        return new Response(null, { status: 204 });
      },
    }),
  ];
  return routes as RouteSpec[];
}

function invalidCredentials(): BusError {
  return new BusError("AUTHENTICATION_REQUIRED", "Invalid agent_id/token");
}

/** Threads with the agents waiting in each (`waiting_agents`: id, display name, emoji). */
function withWaiters(bus: Bus, threads: Thread[]) {
  const waiters = threadWaiters(bus, threads.map((t) => t.thread_id));
  const agents = new Map(agentList(bus).map((agent) => [agent.agent_id, agent]));
  return threads.map((thread) => ({
    ...restThread(thread),
    waiting_agents: (waiters.get(thread.thread_id) ?? []).map((agentId) => {
      const agent = agents.get(agentId);
      return {
        id: agentId,
        display_name: agent?.display_name ?? agentId,
        emoji: agent?.emoji ?? "🤖",
      };
    }),
  }));
}

/** `PUT /api/messages/{id}`: the new text (under either name) and who edits. */
function editBody(bus: Bus) {
  const text = z.string().min(1, "must be a non-empty string").max(bus.config.maxMessageChars);
  return z.object({
    new_content: text.optional(),
    content: text.optional().describe("AgentChatBus's reference's name of new_content"),
    edited_by: z.string().min(1).max(200).default("system"),
  });
}

/** A page of a thread's messages, as AgentChatBus's REST lists them (a bare array). */
function messagesResponse(
  bus: Bus,
  threadId: string,
  query: z.output<typeof messagesQuery>,
): Response {
  const { messages } = listMessages(bus, {
    ...query,
    thread_id: threadId,
    include_attachments: false,
  });
  return json(messages.map(({ message }) => restMessage(message)));
}

/** A chatbus message, or `MESSAGE_NOT_FOUND`. */
function requireChatMessage(bus: Bus, messageId: string) {
  const found = getMessage(bus, messageId);
  if (!found.found) {
    throw new BusError("MESSAGE_NOT_FOUND", `Message '${messageId}' not found`);
  }
  return found.message;
}

type PostBody = Omit<z.output<ReturnType<typeof msgPostInput>>, "thread_id"> & {
  images?: Record<string, unknown>[] | undefined;
};

/**
 * A REST post: with the caller's sync context when it brings one, else with
 * one issued for it (tried again, a few times, when another post came in
 * between), as AgentChatBus does so that a person or a script can always post.
 */
async function post(bus: Bus, threadId: string, body: PostBody): Promise<Response> {
  if (body.role === "system" && body.author === "human") {
    throw invalidArgument("role 'system' is not allowed for human messages");
  }
  const { images, ...fields } = body;
  // (The images join the attachments, under the same rules as msg_post's.)
  const metadata = images === undefined ? body.metadata : {
    ...body.metadata,
    attachments: [...(body.metadata?.attachments ?? []), ...images],
  };
  const session = new Session({});
  const brought = body.expected_last_seq !== undefined && body.reply_token !== undefined;
  for (let attempt = 1;; attempt++) {
    const sync = brought ? undefined : await threadSyncContext(bus, session, threadId);
    try {
      const posted = await postMessage(bus, session, {
        ...fields,
        metadata,
        thread_id: threadId,
        asOperator: true,
        expected_last_seq: sync?.current_seq ?? body.expected_last_seq,
        reply_token: sync?.reply_token ?? body.reply_token,
      });
      const message = requireChatMessage(bus, posted.msg_id);
      return json({ ...restMessage(message), ...posted }, 201);
    } catch (error) {
      const raced = error instanceof BusError && error.code === "SeqMismatchError";
      if (brought || !raced || attempt >= AUTO_SYNC_TRIES) throw error;
    }
  }
}

/** The file name extensions each accepted image type may carry. */
const IMAGE_EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  "image/png": ["png"],
  "image/jpeg": ["jpg", "jpeg", "jpe", "jfif"],
  "image/gif": ["gif"],
  "image/webp": ["webp"],
  "image/avif": ["avif"],
  "image/bmp": ["bmp", "dib"],
};

/** Room for a multipart envelope around the file. */
const MULTIPART_SLACK = 16 << 10;

/**
 * The image of an upload as a data URL, when its bytes are a raster image
 * within the size limit and its name's extension, if it has one, names that
 * type; the declared type is not trusted (AgentChatBus took SVG, `.php` and
 * `.exe` as they came).
 *
 * @throws {BusError} `PAYLOAD_TOO_LARGE`, `INVALID_ARGUMENT` (no file, not a raster
 *   image, or named as another type), `UNSUPPORTED_MEDIA_TYPE` (a body that is not multipart)
 */
async function uploadedImage(
  request: Request,
  maxBytes: number,
): Promise<{ url: string; name: string; mime_type: string; bytes: number }> {
  const type = request.headers.get("content-type") ?? "";
  if (type === "") throw invalidArgument("file is required (multipart/form-data, field file)");
  if (!type.toLowerCase().startsWith("multipart/form-data")) {
    throw new BusError(
      "UNSUPPORTED_MEDIA_TYPE",
      "Send the image as multipart/form-data, field file",
    );
  }
  const body = await readCappedBody(request, maxBytes + MULTIPART_SLACK);
  if (body === undefined) {
    throw new BusError("PAYLOAD_TOO_LARGE", `An image may have at most ${maxBytes} bytes`);
  }
  const form = await new Response(body as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": type },
  }).formData()
    .catch(() => {
      throw invalidArgument("The multipart body could not be read");
    });
  const file = form.get("file");
  if (!(file instanceof File)) throw invalidArgument("file is required");
  if (file.size > maxBytes) {
    throw new BusError("PAYLOAD_TOO_LARGE", `An image may have at most ${maxBytes} bytes`);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const mimeType = sniffRasterImage(bytes);
  if (mimeType === undefined) {
    throw invalidArgument(
      "Unsupported image type: only PNG, JPEG, GIF, WebP, AVIF and BMP images are accepted " +
        "(judged by their bytes)",
    );
  }
  const name = file.name.split(/[\\/]/).pop()!.slice(0, 255);
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : undefined;
  if (extension !== undefined && !IMAGE_EXTENSIONS[mimeType]!.includes(extension)) {
    throw invalidArgument(
      `The file's name ends in .${extension.slice(0, 16)}, which does not match its content ` +
        `(${mimeType}): name an image by its type (or leave out the extension)`,
    );
  }
  return {
    url: `data:${mimeType};base64,${encodeBase64(bytes)}`,
    name,
    mime_type: mimeType,
    bytes: bytes.length,
  };
}

/** Base64 of `bytes`, in slices (no argument list as long as the file). */
function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** `/health`: AgentChatBus's fields, for this server. */
function health() {
  return {
    status: "ok",
    service: "AgentChatBus",
    engine: "agent-bus",
    version: PACKAGE_VERSION,
    runtime: `deno ${Deno.version.deno}`,
    transport: "http+sse",
    startup_mode: "external-service-manual",
    wait_policy: {
      msg_wait_min_timeout_ms: 0,
      enforce_min_timeout: false,
      behavior: "clamp_below_min_non_quick_return",
    },
    management: {
      ownership_assignable: false,
      owner_instance_id: null,
      registered_sessions_count: 0,
    },
  };
}

/** `/api/metrics`: what AgentChatBus counts, read in one transaction. */
function metrics(bus: Bus, startedAt: number) {
  const now = Date.now();
  return {
    uptime_seconds: (now - startedAt) / 1000,
    started_at: new Date(startedAt).toISOString(),
    schema_version: "1.0",
    ...chatMetrics(bus),
  };
}
