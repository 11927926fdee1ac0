/**
 * The chatbus identity, bus and template tools (seed 002, "Agent Identity
 * & Presence", "Bus Configuration & Utilities", "Thread Templates").
 *
 * @module
 */

import { z } from "zod";
import {
  agentPage,
  heartbeat,
  registerAgent,
  resumeAgent,
  unregisterAgent,
  updateAgentProfile,
} from "../../../bus/chat/agents.ts";
import { busConfig, busConnect } from "../../../bus/chat/connect.ts";
import {
  agentCredentialsInput,
  agentIdArg,
  agentRegisterInput,
  agentSchema,
  agentUpdateInput,
  profileShape,
  syncContextShape,
  templateCreateInput,
  templateSchema,
  threadIdArg,
  tokenArg,
} from "../../../bus/chat/schemas.ts";
import {
  requireTemplate,
  setAgentTyping,
  templateCreate,
  templatePage,
} from "../../../bus/chat/threads.ts";
import { defineTool } from "../../define_tool.ts";
import { jsonResult, pageResult } from "./json.ts";

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false } as const;
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
const okSchema = z.object({ ok: z.boolean() });

/** `agent_register`. */
export const agentRegisterTool = defineTool({
  name: "agent_register",
  title: "Register agent",
  description:
    "Register on the bus; returns {agent_id, token}: keep both to resume later. bus_connect does this and joins a thread in one call.",
  input: agentRegisterInput,
  output: agentSchema.extend({ token: z.string() }),
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    const { agent, token } = await registerAgent(bus, args);
    return jsonResult({ ...agent, token });
  },
});

/** `agent_heartbeat`. */
export const agentHeartbeatTool = defineTool({
  name: "agent_heartbeat",
  title: "Heartbeat",
  description:
    "Keep-alive: agents not heard from (or waiting in msg_wait) for 60 s show offline. ok=false on wrong credentials.",
  input: agentCredentialsInput,
  output: okSchema,
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus }) => jsonResult({ ok: await heartbeat(bus, args.agent_id, args.token) }),
});

/** `agent_resume`. */
export const agentResumeTool = defineTool({
  name: "agent_resume",
  title: "Resume agent",
  description: "Resume a session with saved credentials: same identity, marked online.",
  input: agentCredentialsInput,
  output: agentSchema.extend({ ok: z.boolean() }),
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus, session }) {
    const agent = await resumeAgent(bus, args.agent_id, args.token);
    session.chatAgent = { agentId: args.agent_id, token: args.token };
    return jsonResult({ ok: true, ...agent });
  },
});

/** `agent_unregister`. */
export const agentUnregisterTool = defineTool({
  name: "agent_unregister",
  title: "Unregister agent",
  description: "Leave the bus gracefully. ok=false on wrong credentials.",
  input: agentCredentialsInput,
  output: okSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus }) =>
    jsonResult({ ok: await unregisterAgent(bus, args.agent_id, args.token) }),
});

/** `agent_list`. */
export const agentListTool = defineTool({
  name: "agent_list",
  title: "List agents",
  description:
    "Registered agents, in the order they registered, with online status, capabilities and " +
    "skills (never tokens). When more agents exist than one result holds, next_cursor is set: " +
    "call again with cursor=next_cursor for the rest.",
  input: z.object({
    cursor: z.string().max(300).optional().describe(
      "The next_cursor of an earlier agent_list call: the agents after those it listed",
    ),
  }),
  output: z.object({
    agents: z.array(agentSchema),
    has_more: z.boolean().optional().describe("More agents exist: call again with cursor"),
    next_cursor: z.string().nullable().optional().describe("Pass as cursor for the next agents"),
  }),
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) =>
    pageResult(
      "agents",
      agentPage(bus, { cursor: args.cursor, budget: bus.config.toolResultMaxBytes }),
      "agent_list",
    ),
});

/** `agent_update`. */
export const agentUpdateTool = defineTool({
  name: "agent_update",
  title: "Update agent",
  description:
    "Change your profile after registering: only the fields you pass change (an empty display_name restores the automatic one).",
  input: agentUpdateInput,
  output: agentSchema.partial().extend({ ok: z.boolean() }),
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    const { agent_id, token, ...profile } = args;
    const agent = await updateAgentProfile(bus, agent_id, token, profile);
    return jsonResult(agent ? { ok: true, ...agent } : { ok: false });
  },
});

/** `agent_set_typing`. */
export const agentSetTypingTool = defineTool({
  name: "agent_set_typing",
  title: "Typing",
  description:
    "Say you are (or stopped) writing a reply in a thread; the web console shows it for 10 s, or until you post.",
  input: z.object({ thread_id: threadIdArg, agent_id: agentIdArg, is_typing: z.boolean() }),
  output: okSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    await setAgentTyping(bus, {
      threadId: args.thread_id,
      agentId: args.agent_id,
      isTyping: args.is_typing,
    });
    return jsonResult({ ok: true });
  },
});

/** `bus_get_config`. */
export const busGetConfigTool = defineTool({
  name: "bus_get_config",
  title: "Bus configuration",
  description:
    "Bus-level settings (preferred_language, version, endpoint) and the recommended workflow. Call once at startup.",
  input: z.object({}),
  output: z.looseObject({ preferred_language: z.string(), version: z.string() }),
  annotations: READ,
  textStyle: "json",
  usesDb: false,
  run: (_args, { bus, session }) => jsonResult(busConfig(bus, session.endpoint)),
});

/** `bus_connect`. */
export const busConnectTool = defineTool({
  name: "bus_connect",
  title: "Connect",
  description:
    "One step to start: registers you (or resumes with agent_id + token) and joins the thread named " +
    "thread_name (created if missing: you become its administrator) or thread_id. Returns your identity " +
    "(keep agent_id and token), the thread, its messages after after_seq (with the thread's system " +
    "prompt as seq 0; far behind, the newest that fit and skipped_messages saying how to page the " +
    "earlier ones), and the sync context (current_seq, reply_token) for your first msg_post.",
  input: z.object({
    thread_id: threadIdArg.optional(),
    thread_name: z.string().max(200).optional(),
    agent_id: agentIdArg.optional(),
    token: tokenArg.optional(),
    ide: z.string().max(100).optional(),
    model: z.string().max(100).optional(),
    ...profileShape,
    after_seq: z.int().min(0, "must be an int >= 0").optional(),
    system_prompt: z.string().max(16384).optional().describe("For a thread this call creates"),
    template: z.string().max(100).optional().describe("For a thread this call creates"),
  }),
  output: z.object({
    agent: z.object({
      agent_id: z.string(),
      name: z.string(),
      display_name: z.string(),
      emoji: z.string(),
      registered: z.boolean(),
      token: z.string(),
      is_administrator: z.boolean(),
      role_assignment: z.string(),
    }),
    thread: z.object({
      thread_id: z.string(),
      topic: z.string(),
      status: z.string(),
      created: z.boolean(),
      system_prompt: z.string().optional(),
      administrator: z.object({ agent_id: z.string(), name: z.string().nullable() }).optional(),
    }),
    messages: z.array(z.object({
      seq: z.int(),
      author: z.string(),
      role: z.string(),
      content: z.string(),
      created_at: z.string(),
    })),
    has_more: z.boolean(),
    skipped_messages: z.object({
      count: z.int(),
      from_seq: z.int(),
      through_seq: z.int(),
      page_with: z.string(),
    }).optional(),
    ...syncContextShape,
  }),
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus, session }) => jsonResult(await busConnect(bus, session, args)),
});

/** `template_list`. */
export const templateListTool = defineTool({
  name: "template_list",
  title: "List templates",
  description:
    "Thread templates: the built-ins (code-review, security-audit, architecture, brainstorm), " +
    "then custom ones as they were made. When more exist than one result holds, next_cursor " +
    "is set: call again with cursor=next_cursor for the rest.",
  input: z.object({
    cursor: z.string().max(300).optional().describe(
      "The next_cursor of an earlier template_list call: the templates after those it listed",
    ),
  }),
  output: z.object({
    templates: z.array(templateSchema),
    has_more: z.boolean().optional().describe("More templates exist: call again with cursor"),
    next_cursor: z.string().nullable().optional().describe(
      "Pass as cursor for the next templates",
    ),
  }),
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) =>
    pageResult(
      "templates",
      templatePage(bus, { cursor: args.cursor, budget: bus.config.toolResultMaxBytes }),
      "template_list",
    ),
});

/** `template_get`. */
export const templateGetTool = defineTool({
  name: "template_get",
  title: "Get template",
  description: "One template by id.",
  input: z.object({ template_id: z.string().min(1).max(100) }),
  output: templateSchema,
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) => jsonResult(requireTemplate(bus, args.template_id)),
});

/** `template_create`. */
export const templateCreateTool = defineTool({
  name: "template_create",
  title: "Create template",
  description:
    "Create (or replace) a custom template: id and name, optional description, system_prompt and default_metadata. Built-in ids cannot be replaced.",
  input: templateCreateInput,
  output: templateSchema,
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus }) =>
    jsonResult(
      await templateCreate(bus, {
        ...args,
        default_metadata: args.default_metadata ?? args.metadata,
      }),
    ),
});
