/**
 * AgentChatBus's agent routes: `/api/agents` (list, one, update, kick) and
 * register, heartbeat, resume and unregister.
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
} from "../../bus/chat/agents.ts";
import {
  agentCredentialsInput,
  agentRegisterInput,
  agentUpdateInput,
} from "../../bus/chat/schemas.ts";
import type { Bus } from "../../bus/mod.ts";
import { BusError } from "../../errors.ts";
import { json } from "../../http_respond.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";
import { restAgent, restAgentSchema } from "./shapes.ts";

/** What the calls that only succeed answer. */
const OK = z.object({ ok: z.literal(true) });

/** `POST /api/agents/{id}/kick`'s answer. */
const kickedSchema = z.object({
  ok: z.literal(true),
  agent_id: z.string(),
  agent_name: z.string(),
  threads_interrupted: z.array(z.string()),
  sessions_disconnected_count: z.int(),
  message: z.string(),
});

/** `POST /api/agents/register`: `agent_register`'s fields; ide and model default as there. */
const registerBody = agentRegisterInput.partial({ ide: true, model: true });

/** The agent routes. */
export function agentRoutes(bus: Bus): RouteSpec[] {
  const routes = [
    route({
      method: "GET",
      path: "/api/agents",
      summary: "Every registered agent (the agent_list tool), without tokens",
      responses: { "200": answer("An array of agents", z.array(restAgentSchema)) },
      handle: () => json(agentList(bus).map(restAgent)),
    }),
    route({
      method: "GET",
      path: "/api/agents/{id}",
      summary: "One agent",
      responses: { "200": answer("The agent", restAgentSchema) },
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
      responses: { "200": answer("The agent", restAgentSchema.extend({ ok: z.literal(true) })) },
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
      responses: {
        "200": answer("{ok, agent_id, agent_name, threads_interrupted, …}", kickedSchema),
      },
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
      responses: {
        "200": answer(
          "The agent and its token",
          restAgentSchema.extend({ ok: z.literal(true), token: z.string() }),
        ),
      },
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
      responses: { "200": answer("{ok: true}", OK) },
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
      responses: {
        "200": answer("The agent, online again", restAgentSchema.extend({ ok: z.literal(true) })),
      },
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
      responses: { "200": answer("{ok: true}", OK) },
      handle: async ({ body }) => {
        if (!await unregisterAgent(bus, body.agent_id, body.token)) throw invalidCredentials();
        return json({ ok: true });
      },
    }),
  ];
  return routes as RouteSpec[];
}

function invalidCredentials(): BusError {
  return new BusError("AUTHENTICATION_REQUIRED", "Invalid agent_id/token");
}
