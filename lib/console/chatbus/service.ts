/**
 * AgentChatBus's service routes: `/health` (its VS Code extension probes it),
 * `/api/metrics` and `/api/debug/sse-status`.
 *
 * @module
 */

import { chatMetrics } from "../../bus/chat/metrics.ts";
import type { Bus } from "../../bus/mod.ts";
import { json } from "../../http_respond.ts";
import { PACKAGE_VERSION } from "../../version.ts";
import { route, type RouteSpec } from "../route_spec.ts";

/** The service routes. */
export function serviceRoutes(
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
  ];
  return routes as RouteSpec[];
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
