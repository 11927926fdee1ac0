/**
 * AgentChatBus's service routes: `/health` (its VS Code extension probes it),
 * `/api/metrics` and `/api/debug/sse-status`.
 *
 * @module
 */

import { z } from "zod";
import { chatMetrics } from "../../bus/chat/metrics.ts";
import type { Bus } from "../../bus/mod.ts";
import { json } from "../../http_respond.ts";
import { PACKAGE_VERSION } from "../../version.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";

/** `/health`'s answer. */
const healthSchema = z.object({
  status: z.literal("ok"),
  service: z.literal("AgentChatBus"),
  engine: z.literal("agent-bus"),
  version: z.string(),
  runtime: z.string(),
  transport: z.string(),
  startup_mode: z.string(),
  wait_policy: z.object({
    msg_wait_min_timeout_ms: z.int(),
    enforce_min_timeout: z.boolean(),
    behavior: z.string(),
  }),
  management: z.object({
    ownership_assignable: z.boolean(),
    owner_instance_id: z.string().nullable(),
    registered_sessions_count: z.int(),
  }),
});

/** `/api/metrics`' answer: `/health`'s fields and what AgentChatBus counts. */
const metricsSchema = healthSchema.extend({
  uptime_seconds: z.number(),
  started_at: z.string(),
  schema_version: z.string(),
  threads: z.object({ total: z.int(), by_status: z.record(z.string(), z.int()) }),
  messages: z.object({
    total: z.int(),
    rate: z.object({ last_1m: z.int(), last_5m: z.int(), last_15m: z.int() }),
    avg_latency_ms: z.number().nullable(),
    stop_reasons: z.record(z.string(), z.int()),
  }),
  agents: z.object({ total: z.int(), online: z.int() }),
});

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
      responses: { "200": answer("Healthy", healthSchema) },
      handle: () => json(health()),
    }),
    route({
      method: "GET",
      path: "/api/metrics",
      summary: "Uptime, threads by status, message totals and rates, agents online",
      responses: { "200": answer("AgentChatBus's metrics", metricsSchema) },
      handle: () => json({ ...health(), ...metrics(bus, startedAt) }),
    }),
    route({
      method: "GET",
      path: "/api/debug/sse-status",
      summary: "How many event streams are open (/events and /api/events), as AgentChatBus " +
        "answers (on a node on PostgreSQL, those of the session worker that answers)",
      responses: { "200": answer("{subscribers}", z.object({ subscribers: z.int() })) },
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
