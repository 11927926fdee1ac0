/**
 * `bus_connect`, the chatbus dialect's one-step start (research 2.8):
 * register (or resume with agent_id + token), join the thread named or
 * create it (its creator becomes the admin), and get the history window and
 * a sync context in one call. The connection remembers the agent, so later
 * `msg_wait` and `msg_edit` calls may omit credentials. Also
 * `bus_get_config`.
 *
 * @module
 */

import { BusError, invalidArgument } from "../../errors.ts";
import { PACKAGE_VERSION } from "../../version.ts";
import {
  type AgentRow,
  getAgent,
  invalidateReplyTokens,
  threadByName,
  type ThreadView,
  touchAgent,
} from "../../store/chat/mod.ts";
import { setCursor } from "../../store/cursors.ts";
import { type Bus, write } from "../mod.ts";
import type { Session } from "../session.ts";
import { displayName, registerAgent, type RegisterArgs, resumeAgent } from "./agents.ts";
import { connectHistory } from "./read.ts";
import {
  type CreateThreadArgs,
  insertThread,
  type PreparedThread,
  prepareThread,
  requireThread,
  toThread,
} from "./threads.ts";
import { issueSyncContext } from "./tokens.ts";
import { iso, type SyncContext } from "./wire.ts";

/** `bus_connect`'s arguments. */
export interface ConnectArgs extends RegisterArgs {
  thread_id?: string | undefined;
  thread_name?: string | undefined;
  agent_id?: string | undefined;
  token?: string | undefined;
  after_seq?: number | undefined;
  system_prompt?: string | undefined;
  template?: string | undefined;
}

/** `bus_connect`'s result (AgentChatBus's shape). */
export interface ConnectResult extends SyncContext {
  agent: {
    agent_id: string;
    name: string;
    display_name: string;
    emoji: string;
    registered: true;
    token: string;
    is_administrator: boolean;
    role_assignment: string;
  };
  thread: {
    thread_id: string;
    topic: string;
    status: string;
    created: boolean;
    system_prompt?: string;
    administrator?: { agent_id: string; name: string | null };
  };
  messages: { seq: number; author: string; role: string; content: string; created_at: string }[];
  has_more: boolean;
}

/**
 * Connect an agent to a thread.
 *
 * @throws {BusError} `INVALID_ARGUMENT`, `AUTHENTICATION_REQUIRED`, `THREAD_NOT_FOUND`, `TEMPLATE_NOT_FOUND`
 */
export async function busConnect(
  bus: Bus,
  session: Session,
  args: ConnectArgs,
): Promise<ConnectResult> {
  if (!args.thread_id && !args.thread_name) {
    throw invalidArgument("thread_id or thread_name is required");
  }
  const creating: CreateThreadArgs = {
    topic: args.thread_name ?? "",
    system_prompt: args.system_prompt,
    template: args.template,
  };
  // Checked before anything is written: an unknown template creates no agent.
  const prepared = args.thread_name ? prepareThread(bus, creating) : undefined;
  const { agentId, token } = await connectingAgent(bus, args);
  session.chatAgent = { agentId, token };
  const joined = await joinThread(bus, session, { args, prepared, agentId });
  const history = connectHistory(bus, {
    threadId: joined.view.topic_id,
    afterSeq: args.after_seq ?? 0,
  });
  let sync = joined.sync;
  // Far behind: the newest messages are shown and the context stops at the last of them (a
  // message that committed after the read makes the first post fail with it, not skip it).
  if (history.skipped) sync = { ...sync, current_seq: history.messages.at(-1)!.message.seq };
  return {
    agent: connectedAgent(joined, token),
    thread: connectedThread(joined),
    messages: history.messages.map(({ message }) => ({
      seq: message.seq,
      author: message.author_name,
      role: message.role,
      content: message.content,
      created_at: message.created_at,
    })),
    has_more: false,
    ...(history.skipped ? { skipped_messages: history.skipped } : {}),
    ...sync,
  };
}

/** The agent connecting: the one its credentials prove, else a new one registered. */
async function connectingAgent(
  bus: Bus,
  args: ConnectArgs,
): Promise<{ agentId: string; token: string }> {
  if (args.agent_id && args.token) {
    return {
      agentId: (await resumeAgent(bus, args.agent_id, args.token)).agent_id,
      token: args.token,
    };
  }
  if (args.thread_id) bus.store.read(() => requireThread(bus.store, args.thread_id!));
  const registered = await registerAgent(bus, args);
  return { agentId: registered.agent.agent_id, token: registered.token };
}

/** What {@linkcode joinThread} wrote and read. */
interface Joined {
  view: ThreadView;
  created: boolean;
  agentRow: AgentRow;
  agentId: string;
  sync: SyncContext;
}

/**
 * In one transaction: find the thread (or create the named one), mark the
 * agent active in it and issue its first sync context.
 */
async function joinThread(
  bus: Bus,
  session: Session,
  { args, prepared, agentId }: {
    args: ConnectArgs;
    prepared: PreparedThread | undefined;
    agentId: string;
  },
): Promise<Joined> {
  return await write(bus, () => {
    let view = args.thread_id
      ? requireThread(bus.store, args.thread_id)
      : threadByName(bus.store, prepared!.topic);
    const created = view === undefined;
    const agentRow = getAgent(bus.store, agentId);
    if (!agentRow) {
      throw new BusError("AUTHENTICATION_REQUIRED", "The agent was unregistered meanwhile");
    }
    view ??= insertThread(bus, prepared!, { agentId, name: displayName(agentRow) });
    touchAgent(bus.store, { agentId, activity: "bus_connect", now: bus.now(), heartbeat: true });
    invalidateReplyTokens(bus.store, {
      topicId: view.topic_id,
      agentId,
      source: "bus_connect",
      now: bus.now(),
    });
    const sync = issueSyncContext(bus, session, {
      topicId: view.topic_id,
      agentId,
      source: "bus_connect",
    });
    setCursor(bus.store, {
      topicId: view.topic_id,
      agentName: agentRow.name,
      lastSeq: sync.current_seq,
      now: bus.now(),
    });
    return { view, created, agentRow, agentId, sync };
  });
}

/** The connected agent as `bus_connect` shows it, with its role in the thread. */
function connectedAgent(
  { view, agentRow, agentId }: Joined,
  token: string,
): ConnectResult["agent"] {
  const adminId = view.creator_admin_id;
  const isAdmin = adminId === agentId;
  const roleAssignment = !adminId
    ? "You are a PARTICIPANT in this thread. Please wait for the administrator to coordinate or assign you tasks."
    : isAdmin
    ? "You are the ADMINISTRATOR for this thread. You are responsible for coordination and task assignment."
    : `You are a PARTICIPANT in this thread. Please wait for the administrator (@${adminId}) to coordinate or assign you tasks.`;
  return {
    agent_id: agentId,
    name: agentRow.name,
    display_name: displayName(agentRow),
    emoji: agentRow.emoji,
    registered: true,
    token,
    is_administrator: isAdmin,
    role_assignment: roleAssignment,
  };
}

/** The thread as `bus_connect` shows it (its system prompt when this call created it). */
function connectedThread({ view, created }: Joined): ConnectResult["thread"] {
  const thread = toThread(view);
  const adminId = view.creator_admin_id;
  return {
    thread_id: thread.thread_id,
    topic: thread.topic,
    status: thread.status,
    created,
    ...(created && thread.system_prompt ? { system_prompt: thread.system_prompt } : {}),
    ...(adminId ? { administrator: { agent_id: adminId, name: view.creator_admin_name } } : {}),
  };
}

/**
 * `bus_get_config`: what an agent should know at startup. `endpoint` is where
 * the asking session is served: its MCP URL over HTTP, `stdio` over stdio.
 */
export function busConfig(
  bus: Bus,
  endpoint: string,
): { preferred_language: string; version: string; [key: string]: unknown } {
  return {
    preferred_language: "English",
    language_source: "default",
    language_note:
      "Please respond in English whenever possible. This is a soft preference - use your best judgement.",
    bus_name: "agent-bus",
    version: PACKAGE_VERSION,
    endpoint,
    transport: endpoint === "stdio" ? "stdio" : "streamable-http",
    server_time: iso(bus.now()),
    auth_requirements: {
      mcp_thread_create: {
        required: true,
        body: ["topic", "agent_id", "token"],
        rule: "agent_id and token must be provided explicitly in thread_create input.",
      },
      msg_post: {
        required: true,
        body: ["expected_last_seq", "reply_token"],
        rule:
          "Every msg_post needs the current_seq and reply_token of your latest sync context (from bus_connect, thread_create, msg_wait or your previous msg_post).",
      },
    },
    recommended_workflow: {
      join_or_create_thread: {
        tool: "bus_connect",
        input: { thread_name: "My Topic", ide: "Cursor", model: "Claude" },
        note:
          "One call: registers the agent (or resumes it with agent_id + token), joins or creates the thread, returns messages and a sync context.",
      },
      loop:
        "msg_wait(thread_id, after_seq=current_seq) -> read -> msg_post(..., expected_last_seq=current_seq, reply_token) -> repeat",
    },
  };
}
