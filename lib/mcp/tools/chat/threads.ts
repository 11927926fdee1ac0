/**
 * The chatbus thread tools (seed 002, "Thread Management").
 *
 * @module
 */

import { z } from "zod";
import {
  agentIdArg,
  syncContextShape,
  threadArchiveInput,
  threadCloseInput,
  threadCreateInput,
  threadIdArg,
  threadListInput,
  threadSchema,
  threadSetStateInput,
  threadSettingsSchema,
  threadSettingsUpdateInput,
  tokenArg,
} from "../../../bus/chat/schemas.ts";
import {
  closeMeeting,
  createThread,
  type Thread,
  threadClose,
  threadDelete,
  threadGet,
  threadList,
  threadSetState,
  threadSettings,
  threadWaitStates,
  updateThreadSettings,
} from "../../../bus/chat/threads.ts";
import { defineTool } from "../../define_tool.ts";
import { jsonResult } from "./json.ts";

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false } as const;
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;

/** `thread_create`. */
export const threadCreateTool = defineTool({
  name: "thread_create",
  title: "Create thread",
  description:
    "Create a new conversation thread. Authentication is mandatory: pass agent_id and token (from " +
    "bus_connect or agent_register). The creator becomes the thread administrator. Optional template " +
    "(code-review, security-audit, architecture, brainstorm, or a custom one) supplies system_prompt and " +
    "metadata defaults; your values override them. A topic that names a thread already returns " +
    "that thread. Returns thread_id plus the sync context (current_seq, reply_token, " +
    "reply_window) for your first msg_post.",
  input: threadCreateInput,
  output: z.object({
    thread_id: z.string(),
    topic: z.string(),
    status: z.string(),
    system_prompt: z.string().nullable(),
    template_id: z.string().nullable(),
    ...syncContextShape,
  }),
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus, session }) {
    const { thread, sync } = await createThread(bus, session, {
      topic: args.topic,
      agentId: args.agent_id,
      token: args.token,
      metadata: args.metadata,
      system_prompt: args.system_prompt,
      template: args.template,
    });
    return jsonResult({
      thread_id: thread.thread_id,
      topic: thread.topic,
      status: thread.status,
      system_prompt: thread.system_prompt,
      template_id: thread.template_id,
      ...sync,
    });
  },
});

/** `thread_list`. */
export const threadListTool = defineTool({
  name: "thread_list",
  title: "List threads",
  description:
    "List threads, newest first, optionally filtered by status. Archived threads are left out unless " +
    "status='archived' or include_archived=true. Pages with limit and before (pass next_cursor). " +
    "Returns {threads, total, has_more, next_cursor}.",
  input: threadListInput,
  output: z.object({
    threads: z.array(threadSchema),
    total: z.int(),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
  }),
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) => jsonResult(threadList(bus, args)),
});

/** `thread_get`. */
export const threadGetTool = defineTool({
  name: "thread_get",
  title: "Get thread",
  description: "Get the details of one thread.",
  input: z.object({ thread_id: threadIdArg }),
  output: threadSchema,
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) => jsonResult(threadGet(bus, args.thread_id)),
});

/** `thread_delete`. */
export const threadDeleteTool = defineTool({
  name: "thread_delete",
  title: "Delete thread",
  description:
    "Permanently delete a thread and ALL its messages. IRREVERSIBLE. Prefer thread_archive. Requires confirm=true.",
  input: z.object({
    thread_id: threadIdArg,
    confirm: z.boolean().describe("Must be true to proceed"),
  }),
  output: z.object({ ok: z.boolean(), deleted: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    await threadDelete(bus, args.thread_id, args.confirm);
    return jsonResult({ ok: true, deleted: args.thread_id });
  },
});

const stateResult = z.object({ ok: z.boolean(), thread_id: z.string(), status: z.string() });

/** What the tools that change a thread's state answer (AgentChatBus's `{ok, thread_id, status}`). */
function stateOutput(thread: Thread) {
  return jsonResult({ ok: true, thread_id: thread.thread_id, status: thread.status });
}

/** `thread_set_state`. */
export const threadSetStateTool = defineTool({
  name: "thread_set_state",
  title: "Set thread state",
  description:
    "Move a thread to a state: discuss, implement, review, done or archived. Any state may follow any other; a closed thread reopens.",
  input: threadSetStateInput,
  output: stateResult,
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    return stateOutput(await threadSetState(bus, args.thread_id, args.state));
  },
});

/** `thread_close`. */
export const threadCloseTool = defineTool({
  name: "thread_close",
  title: "Close thread",
  description:
    "Close a thread with an optional summary; sets closed_at. Closed threads keep their messages but accept no new ones.",
  input: threadCloseInput,
  output: stateResult,
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    return stateOutput(await threadClose(bus, args.thread_id, args.summary));
  },
});

/** `close_meeting`. */
export const closeMeetingTool = defineTool({
  name: "close_meeting",
  title: "Close meeting",
  description:
    "Close a thread as its administrator (agent_id and token required): the same close as thread_close, refused (FORBIDDEN) for anyone but the thread's admin.",
  input: z.object({
    thread_id: threadIdArg,
    agent_id: agentIdArg,
    token: tokenArg,
    summary: z.string().max(16384).optional(),
  }),
  output: stateResult,
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    return stateOutput(
      await closeMeeting(bus, {
        threadId: args.thread_id,
        agentId: args.agent_id,
        token: args.token,
        summary: args.summary,
      }),
    );
  },
});

/** `thread_archive`. */
export const threadArchiveTool = defineTool({
  name: "thread_archive",
  title: "Archive thread",
  description:
    "Archive a thread: hidden from thread_list by default, still readable with thread_get or thread_list(status='archived').",
  input: threadArchiveInput,
  output: stateResult,
  annotations: WRITE,
  textStyle: "json",
  usesDb: true,
  async run(args, { bus }) {
    return stateOutput(await threadSetState(bus, args.thread_id, "archived"));
  },
});

/** `thread_wait_state_get`. */
export const threadWaitStateGetTool = defineTool({
  name: "thread_wait_state_get",
  title: "Who is waiting",
  description:
    "Which agents are blocked in msg_wait on a thread now: agents_waiting [{agent_id, entered_at, timeout_ms}] and count. Expired waits are pruned first.",
  input: z.object({ thread_id: threadIdArg }),
  output: z.object({
    thread_id: z.string(),
    agents_waiting: z.array(
      z.object({ agent_id: z.string(), entered_at: z.string(), timeout_ms: z.int() }),
    ),
    count: z.int(),
  }),
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus }) => jsonResult(await threadWaitStates(bus, args.thread_id)),
});

/** `thread_settings_get`. */
export const threadSettingsGetTool = defineTool({
  name: "thread_settings_get",
  title: "Get thread settings",
  description:
    "A thread's coordination settings in AgentChatBus's terms: agent-bus has no admin coordinator, so " +
    "auto_administrator_enabled is false with no timeouts; creator_admin_id administers the thread.",
  input: z.object({ thread_id: threadIdArg }),
  output: threadSettingsSchema,
  annotations: READ,
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) => jsonResult(threadSettings(bus, args.thread_id)),
});

/** `thread_settings_update`. */
export const threadSettingsUpdateTool = defineTool({
  name: "thread_settings_update",
  title: "Update thread settings",
  description:
    "AgentChatBus's thread settings: auto_administrator_enabled=false is accepted (there is no " +
    "coordinator); turning it on or setting timeout_seconds / switch_timeout_seconds is refused.",
  input: threadSettingsUpdateInput,
  output: threadSettingsSchema.extend({ ok: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) => jsonResult({ ok: true, ...updateThreadSettings(bus, args) }),
});
