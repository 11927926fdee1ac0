/**
 * AgentChatBus's thread routes: `/api/threads` (list, create) and one
 * thread's sync context, settings, administrator, name, export, participants,
 * state and deletion.
 *
 * @module
 */

import { z } from "zod";
import { agentList, findAgent } from "../../bus/chat/agents.ts";
import {
  agentIdArg,
  syncContextShape,
  threadCreateInput,
  threadListInput,
  threadSchema,
  threadSettingsSchema,
  threadSettingsUpdateInput,
} from "../../bus/chat/schemas.ts";
import {
  createThread,
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
} from "../../bus/chat/threads.ts";
import type { Bus } from "../../bus/mod.ts";
import { Session } from "../../bus/session.ts";
import { BusError } from "../../errors.ts";
import { json } from "../../http_respond.ts";
import { chatbusExportFile } from "../export_file.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";
import { restAgent, restAgentSchema, restThread, restThreadSchema } from "./shapes.ts";

/** `GET /api/threads`' answer: a page of threads, each with who waits in it. */
const threadPageSchema = z.object({
  threads: z.array(restThreadSchema.extend({
    waiting_agents: z.array(
      z.object({ id: z.string(), display_name: z.string(), emoji: z.string() }),
    ),
  })),
  total: z.int(),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

/** `GET /api/threads/{id}/admin`'s answer: the creator, or nulls. */
const adminSchema = z.object({
  admin_id: z.string().nullable(),
  admin_name: z.string().nullable(),
  admin_emoji: z.string().nullable(),
  admin_type: z.literal("creator").nullable(),
  assigned_at: z.string().nullable(),
});

/**
 * One page of `GET /api/threads`. AgentChatBus answers every thread at once
 * (its extension and web UI never ask for a second page), so REST is bound
 * by what a browser takes in one JSON document, not by the tool result
 * budget: 10,000 threads or 8 MiB of thread text, whichever comes first;
 * beyond it `has_more` and `next_cursor` lead on.
 */
export const REST_THREAD_PAGE = { maxThreads: 10_000, maxBytes: 8 << 20 } as const;

/** `POST /api/threads`: `thread_create`'s fields, the creator's token in `X-Agent-Token`. */
const createThreadBody = threadCreateInput.omit({ agent_id: true, token: true }).extend({
  creator_agent_id: agentIdArg.describe("The creating agent (its token in X-Agent-Token)"),
});

/** The thread routes. */
export function threadRoutes(bus: Bus): RouteSpec[] {
  const routes = [
    route({
      method: "GET",
      path: "/api/threads",
      summary: "Threads, newest first (the thread_list tool), each with who waits in it; all " +
        "of them without a limit, as AgentChatBus answers, up to 10,000 threads or 8 MiB a page",
      query: threadListInput,
      responses: { "200": answer("{threads, total, has_more, next_cursor}", threadPageSchema) },
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
      responses: {
        "201": answer(
          "The thread and its first sync context",
          restThreadSchema.extend(syncContextShape),
        ),
      },
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
      method: "POST",
      path: "/api/threads/{id}/sync-context",
      summary: "A fresh sync context (current_seq, reply_token) bound to no agent",
      responses: {
        "200": answer("{current_seq, reply_token, reply_window}", z.object(syncContextShape)),
      },
      handle: async ({ params: { id } }) =>
        json(await threadSyncContext(bus, new Session({}), id!)),
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/settings",
      summary: "A thread's coordination settings (the thread_settings_get tool)",
      responses: { "200": answer("The settings", threadSettingsSchema) },
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
      responses: { "200": answer("The settings", threadSettingsSchema) },
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
      responses: { "200": answer("The thread's administrator, if any", adminSchema) },
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
      responses: {
        "200": answer(
          "{ok: true, thread}",
          z.object({ ok: z.literal(true), thread: restThreadSchema }),
        ),
      },
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
      responses: {
        "200": answer(
          "{ok: true, deleted}",
          z.object({ ok: z.literal(true), deleted: z.string() }),
        ),
      },
      handle: async ({ params: { id } }) => {
        await threadDelete(bus, id!, true);
        return json({ ok: true, deleted: id });
      },
    }),
    route({
      method: "GET",
      path: "/api/threads/{id}/agents",
      summary: "A thread's participants: its creator, the agents that posted, those waiting",
      responses: { "200": answer("An array of agents", z.array(restAgentSchema)) },
      handle: ({ params: { id } }) => {
        const ids = new Set(threadParticipants(bus, id!));
        return json(agentList(bus).filter((agent) => ids.has(agent.agent_id)).map(restAgent));
      },
    }),
    route({
      method: "POST",
      path: "/api/threads/{id}/unarchive",
      summary: "Unarchive a thread (back to discuss)",
      responses: { "200": answer("The thread", threadSchema) },
      handle: async ({ params: { id } }) => json(await threadSetState(bus, id!, "discuss")),
    }),
  ];
  return routes as RouteSpec[];
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
