/**
 * AgentChatBus's REST API on the console's router, so that its scripts and
 * its VS Code extension work against agent-bus by changing the base URL:
 * `/health`, `/api/metrics`, `/api/threads` (list, create, delete, messages,
 * post, sync-context, state, close, archive, settings, agents, admin,
 * transcript, export), `/api/messages` (edit, reactions, history),
 * `/api/agents` (register, heartbeat, resume, unregister, list, get, update,
 * kick), `/api/templates` and `/api/upload/image`, one module per resource (its settings are in
 * `settings.ts`, its event stream in `events.ts`, the JSON shapes in `shapes.ts`). Routes, methods, bodies,
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

import type { Bus } from "../../bus/mod.ts";
import type { RouteSpec } from "../route_spec.ts";
import { agentRoutes } from "./agents.ts";
import { messageRoutes } from "./messages.ts";
import { serviceRoutes } from "./service.ts";
import { threadRoutes } from "./threads.ts";
import { templateRoutes } from "./templates.ts";
import { uploadRoutes } from "./upload.ts";

/** The AgentChatBus routes. */
export function chatbusRoutes(
  bus: Bus,
  service: { startedAt: number; eventStreams: () => number },
): RouteSpec[] {
  return [
    ...serviceRoutes(bus, service),
    ...threadRoutes(bus),
    ...messageRoutes(bus),
    ...agentRoutes(bus),
    ...templateRoutes(bus),
    ...uploadRoutes(bus),
  ];
}
