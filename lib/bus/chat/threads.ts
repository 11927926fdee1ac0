/**
 * Chatbus threads (seed 002, "Thread Management" and "Thread Templates").
 *
 * A thread is a topic of the bus: v6.3 peers, chatbus agents and the human
 * in the console read one ordered stream. What the dialect adds (state,
 * summary, system prompt, template, creator admin) lives in `bus_threads`;
 * a topic made by another dialect is a `discuss` thread without them.
 * States follow no transition rules, as in AgentChatBus: any state may
 * follow any other, and setting one on a closed thread reopens it. Only
 * `closed` stops posting.
 *
 * @module
 */

import { countWithinBudget, fitJson } from "../../budget.ts";
import { BusError, invalidArgument } from "../../errors.ts";
import {
  chatWaits,
  clearTyping,
  countThreads,
  deleteTemplate,
  getAgent,
  getTemplate,
  getThread,
  listTemplates,
  listThreads,
  pruneChatWaits,
  putTemplate,
  putThread,
  reopenTopic,
  setThreadState,
  setTyping,
  type TemplateRow,
  threadAuthorIds,
  threadByName,
  type ThreadView,
} from "../../store/chat/mod.ts";
import {
  bumpTopicsVersion,
  closeTopic,
  deleteTopic as deleteTopicRows,
  getTopic,
  renameTopic,
  type TopicRow,
} from "../../store/topics.ts";
import { latestSeq } from "../../store/messages.ts";
import type { Store } from "../../store/mod.ts";
import { encodeCursor, parseCursor } from "../cursor.ts";
import { type Bus, write } from "../mod.ts";
import type { Session } from "../session.ts";
import { insertNewTopic, MAX_TOPIC_NAME_CHARS } from "../topics.ts";
import { cleanName, cleanOptionalText, metadataJson, parseMetadata } from "../validate.ts";
import { authenticate, displayName } from "./agents.ts";
import { issueSyncContext } from "./tokens.ts";
import { contentFilter, screenOptional } from "../secrets.ts";
import { fromIso, iso, type SyncContext } from "./wire.ts";

/** States `thread_set_state` accepts. */
export const THREAD_STATES = ["discuss", "implement", "review", "done", "archived"] as const;
/** Statuses a thread can show (`thread_list`'s filter). */
export const THREAD_STATUSES = [...THREAD_STATES, "closed"] as const;
/** Hard cap of one `thread_list` page. */
export const MAX_THREAD_LIST = 200;
/** Longest system prompt or summary. */
const MAX_PROMPT_CHARS = 16384;
/** Longest template id or name. */
const MAX_TEMPLATE_ID_CHARS = 100;

/** The four built-in templates (seed 002): fixed ids and names; never shadowed or deleted. */
export const BUILTIN_TEMPLATES: readonly Template[] = [
  {
    id: "code-review",
    name: "Code Review",
    description: "Structured review focused on correctness, security, and style",
    system_prompt:
      "You are reviewing code. Check correctness first, then security, then style; cite files and lines, and say what to change.",
    default_metadata: null,
    is_builtin: true,
    created_at: null,
  },
  {
    id: "security-audit",
    name: "Security Audit",
    description: "Security-focused review with severity ratings",
    system_prompt:
      "You are auditing for security. Report each finding with a severity (critical, high, medium, low), where it is, and how to fix it.",
    default_metadata: null,
    is_builtin: true,
    created_at: null,
  },
  {
    id: "architecture",
    name: "Architecture Discussion",
    description: "Design trade-offs and system structure evaluation",
    system_prompt:
      "You are discussing architecture. Weigh the trade-offs of each option, name what each costs, and converge on a decision with its reasons.",
    default_metadata: null,
    is_builtin: true,
    created_at: null,
  },
  {
    id: "brainstorm",
    name: "Brainstorm",
    description: "Free-form ideation, all ideas welcome",
    system_prompt:
      "You are brainstorming. Offer many ideas, build on the others', and hold criticism until the ideas are on the table.",
    default_metadata: null,
    is_builtin: true,
    created_at: null,
  },
];

/** A template as tools return it. */
export interface Template {
  id: string;
  name: string;
  description: string | null;
  system_prompt: string | null;
  default_metadata: Record<string, unknown> | null;
  is_builtin: boolean;
  created_at: string | null;
}

/** A thread as tools return it. */
export interface Thread {
  thread_id: string;
  topic: string;
  status: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  summary: string | null;
  system_prompt: string | null;
  template_id: string | null;
  metadata: Record<string, unknown> | null;
  creator_admin_id: string | null;
}

/** Convert a thread view. */
export function toThread(view: ThreadView): Thread {
  return {
    thread_id: view.topic_id,
    topic: view.name,
    status: view.status,
    created_at: iso(view.created_at),
    updated_at: iso(view.updated_at),
    closed_at: view.closed_at === null ? null : iso(view.closed_at),
    summary: view.summary,
    system_prompt: view.system_prompt,
    template_id: view.template_id,
    metadata: parseMetadata(view.metadata_json),
    creator_admin_id: view.creator_admin_id,
  };
}

/**
 * The thread with this id.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export function requireThread(store: Store, threadId: string): ThreadView {
  const view = threadId.length <= 64 ? getThread(store, threadId) : undefined;
  if (!view) throw threadNotFound(threadId);
  return view;
}

/**
 * Only the topic row of a thread: all a post needs (whether it exists and is closed), without
 * the thread view's joins.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export function requireThreadTopic(store: Store, threadId: string): TopicRow {
  return foundThreadTopic(threadId.length <= 64 ? getTopic(store, threadId) : undefined, threadId);
}

/**
 * `topic`, the thread `threadId` read with others in one go.
 *
 * @throws {BusError} `THREAD_NOT_FOUND` when it is undefined
 */
export function foundThreadTopic(topic: TopicRow | undefined, threadId: string): TopicRow {
  if (!topic) throw threadNotFound(threadId);
  return topic;
}

function threadNotFound(threadId: string): BusError {
  return new BusError("THREAD_NOT_FOUND", `Thread '${threadId}' not found`, {
    context: { thread_id: threadId },
  });
}

/** What creating a thread takes. */
export interface CreateThreadArgs {
  topic: string;
  metadata?: Record<string, unknown> | null | undefined;
  system_prompt?: string | undefined;
  template?: string | undefined;
}

/** A thread's fields prepared before the write lock. */
export interface PreparedThread {
  topic: string;
  metadataJson: string | null;
  systemPrompt: string | null;
  templateId: string | null;
}

/**
 * Check a new thread's fields and apply its template: the template's
 * system prompt and default metadata are defaults the caller's values override.
 *
 * @throws {BusError} `TEMPLATE_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export function prepareThread(bus: Bus, args: CreateThreadArgs): PreparedThread {
  const topic = cleanName(args.topic, "topic", MAX_TOPIC_NAME_CHARS);
  const template = args.template === undefined || args.template === ""
    ? undefined
    : requireTemplate(bus, args.template);
  const metadata = template?.default_metadata || args.metadata
    ? { ...template?.default_metadata, ...args.metadata }
    : null;
  return {
    topic,
    metadataJson: screenOptional(
      metadataJson(metadata, "metadata", bus.config.maxMetadataChars),
      contentFilter(bus.config, "metadata"),
    ),
    systemPrompt: screenOptional(
      cleanOptionalText(args.system_prompt, "system_prompt", MAX_PROMPT_CHARS),
      contentFilter(bus.config, "system_prompt"),
    ) ?? template?.system_prompt ?? null,
    templateId: template?.id ?? null,
  };
}

/** Insert a prepared thread with `admin` as its creator admin; call inside a write transaction. */
export function insertThread(
  bus: Bus,
  prepared: PreparedThread,
  admin: { agentId: string; name: string } | null,
): ThreadView {
  const topic = insertNewTopic(bus, { name: prepared.topic, metadataJson: prepared.metadataJson });
  putThread(bus.store, {
    topic_id: topic.topic_id,
    state: "discuss",
    summary: null,
    system_prompt: prepared.systemPrompt,
    template_id: prepared.templateId,
    creator_admin_id: admin?.agentId ?? null,
    creator_admin_name: admin?.name ?? null,
    updated_at: topic.created_at,
  });
  return getThread(bus.store, topic.topic_id)!;
}

/**
 * `thread_create`: the creator (authenticated) becomes the thread's admin
 * and gets the first sync context. A topic that names a thread already
 * gets that thread (the open one, else the newest) and a sync context for
 * it, as in AgentChatBus, whose scripts create their thread on every run.
 *
 * @throws {BusError} `AUTHENTICATION_REQUIRED`, `TEMPLATE_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function createThread(
  bus: Bus,
  session: Session,
  args: CreateThreadArgs & { agentId: string; token: string },
): Promise<{ thread: Thread; sync: SyncContext }> {
  const prepared = prepareThread(bus, args);
  return await write(bus, () => {
    const agent = authenticate(bus.store, args.agentId, args.token);
    const view = threadByName(bus.store, prepared.topic) ?? insertThread(bus, prepared, {
      agentId: agent.agent_id,
      name: displayName(agent),
    });
    const sync = issueSyncContext(bus, session, {
      topicId: view.topic_id,
      agentId: agent.agent_id,
      source: "thread_create",
    });
    return { thread: toThread(view), sync };
  });
}

/** `thread_list`'s arguments. */
export interface ThreadListArgs {
  status?: string | undefined;
  include_archived?: boolean | undefined;
  /** 0: all (up to the hard cap of 200). */
  limit?: number | undefined;
  /** A `next_cursor` from thread_list, or an ISO date: threads created strictly before it. */
  before?: string | undefined;
}

/** How large one page of {@linkcode threadList} may be. */
export interface ThreadPageBounds {
  /** Most threads on a page. */
  maxThreads: number;
  /** Most bytes of thread text on a page. */
  maxBytes: number;
}

/**
 * `thread_list`: newest first, with cursor pagination; a page also stops at
 * `bounds` (by default the tool's: {@linkcode MAX_THREAD_LIST} threads and
 * the result budget), and `has_more` and `next_cursor` lead on.
 */
export function threadList(bus: Bus, args: ThreadListArgs, bounds?: ThreadPageBounds): {
  threads: Thread[];
  total: number;
  has_more: boolean;
  next_cursor: string | null;
} {
  if (args.status !== undefined && !(THREAD_STATUSES as readonly string[]).includes(args.status)) {
    throw invalidArgument(`status must be one of ${THREAD_STATUSES.join(", ")}`);
  }
  const before = args.before === undefined ? undefined : parseThreadCursor(args.before);
  const { maxThreads, maxBytes } = bounds ??
    { maxThreads: MAX_THREAD_LIST, maxBytes: bus.config.toolResultMaxBytes };
  const limit = !args.limit || args.limit > maxThreads ? maxThreads : args.limit;
  const query = {
    status: args.status,
    includeArchived: args.include_archived ?? false,
  };
  const [rows, total] = bus.store.read(() =>
    [
      listThreads(bus.store, { ...query, before, limit: limit + 1 }),
      countThreads(bus.store, query),
    ] as const
  );
  // Within the byte bound, like every listing: the rest is on the next page.
  const within = rows.slice(0, limit);
  const page = within.slice(
    0,
    countWithinBudget(
      within,
      (row) => [row.name, row.summary, row.system_prompt, row.metadata_json],
      maxBytes,
    ),
  );
  const hasMore = rows.length > page.length;
  return {
    threads: page.map(toThread),
    total,
    has_more: hasMore,
    next_cursor: hasMore ? threadCursor(page.at(-1)!) : null,
  };
}

/**
 * A `next_cursor`: the last thread's creation date, then `~` and its
 * insertion order, so that threads created in the same millisecond are
 * neither skipped nor listed twice.
 */
function threadCursor(view: ThreadView): string {
  return `${iso(view.created_at)}~${view.position}`;
}

/** `before`: a {@linkcode threadCursor} or a plain ISO date. */
function parseThreadCursor(text: string): { at: number; position?: number } {
  const [date = "", position] = text.split("~", 2);
  const at = fromIso(date);
  const order = position === undefined ? undefined : Number(position);
  if (at === undefined || (order !== undefined && !Number.isSafeInteger(order))) {
    throw invalidArgument("before must be a next_cursor from thread_list or an ISO date");
  }
  return order === undefined ? { at } : { at, position: order };
}

/** The highest seq of a thread (0 when it has none). */
export function threadLatestSeq(bus: Bus, threadId: string): number {
  return bus.store.read(() => {
    requireThread(bus.store, threadId);
    return latestSeq(bus.store, threadId);
  });
}

/**
 * A fresh sync context of a thread bound to no agent: REST's
 * `sync-context`, and what a REST post that brings none posts with.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export async function threadSyncContext(
  bus: Bus,
  session: Session,
  threadId: string,
): Promise<SyncContext> {
  return await write(bus, () => {
    requireThread(bus.store, threadId);
    return issueSyncContext(bus, session, {
      topicId: threadId,
      agentId: null,
      source: "sync_context",
    });
  }, { topics: [threadId] });
}

/** A thread's settings in AgentChatBus's terms (`thread_settings_get`). */
export interface ThreadSettings {
  thread_id: string;
  auto_administrator_enabled: boolean;
  timeout_seconds: number | null;
  switch_timeout_seconds: number | null;
  auto_assigned_admin_id: string | null;
  auto_assigned_admin_name: string | null;
  creator_admin_id: string | null;
  creator_admin_name: string | null;
}

/**
 * `thread_settings_get`: AgentChatBus's settings drive its admin
 * coordinator, which agent-bus does not have: it is off, with no timeouts,
 * and the administrator is the thread's creator.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export function threadSettings(bus: Bus, threadId: string): ThreadSettings {
  const thread = bus.store.read(() => requireThread(bus.store, threadId));
  return {
    thread_id: thread.topic_id,
    auto_administrator_enabled: false,
    timeout_seconds: null,
    switch_timeout_seconds: null,
    auto_assigned_admin_id: null,
    auto_assigned_admin_name: null,
    creator_admin_id: thread.creator_admin_id,
    creator_admin_name: thread.creator_admin_name,
  };
}

/**
 * `thread_settings_update`: what maps onto agent-bus (turning the
 * coordinator off, which it is) is accepted; turning it on or giving it
 * timeouts is refused, saying why.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export function updateThreadSettings(
  bus: Bus,
  args: {
    thread_id: string;
    auto_administrator_enabled?: boolean | undefined;
    timeout_seconds?: number | undefined;
    switch_timeout_seconds?: number | undefined;
  },
): ThreadSettings {
  const settings = threadSettings(bus, args.thread_id);
  const unsupported = [
    ...(args.auto_administrator_enabled === true ? ["auto_administrator_enabled=true"] : []),
    ...(args.timeout_seconds !== undefined ? ["timeout_seconds"] : []),
    ...(args.switch_timeout_seconds !== undefined ? ["switch_timeout_seconds"] : []),
  ];
  if (unsupported.length > 0) {
    throw invalidArgument(
      `agent-bus has no admin coordinator, so ${unsupported.join(", ")} cannot be set: ` +
        "the thread's creator administers it (close_meeting), and msg_wait never times an agent out",
    );
  }
  return settings;
}

/** Most participants `threadParticipants` returns. */
const MAX_PARTICIPANTS = 500;

/**
 * A thread's participants, as AgentChatBus counts them: its creator (the
 * administrator), the registered agents that posted in it, and those
 * waiting in it now.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export function threadParticipants(bus: Bus, threadId: string): string[] {
  const now = bus.now();
  return bus.store.read(() => {
    const thread = requireThread(bus.store, threadId);
    return [
      ...new Set([
        ...(thread.creator_admin_id ? [thread.creator_admin_id] : []),
        ...threadAuthorIds(bus.store, threadId, MAX_PARTICIPANTS),
        ...chatWaits(bus.store, { topicId: threadId, now }).map((row) => row.agent_id),
      ]),
    ].slice(0, MAX_PARTICIPANTS);
  });
}

/** The agents waiting in `msg_wait` in each of `threadIds` now (one read). */
export function threadWaiters(bus: Bus, threadIds: readonly string[]): Map<string, string[]> {
  const now = bus.now();
  return bus.store.read(() =>
    new Map(
      threadIds.map((topicId) => [
        topicId,
        chatWaits(bus.store, { topicId, now }).map((row) => row.agent_id),
      ]),
    )
  );
}

/** `thread_get`. */
export function threadGet(bus: Bus, threadId: string): Thread {
  return toThread(bus.store.read(() => requireThread(bus.store, threadId)));
}

/**
 * Rename a thread (AgentChatBus's `POST /api/threads/{id}/rename`): its
 * topic, which no other thread may have (creating by topic finds a thread).
 *
 * @throws {BusError} `THREAD_NOT_FOUND`, `THREAD_TOPIC_IN_USE`, `INVALID_ARGUMENT`
 */
export async function threadRename(bus: Bus, threadId: string, topic: string): Promise<Thread> {
  const name = cleanName(topic, "topic", MAX_TOPIC_NAME_CHARS);
  return await write(bus, () => {
    requireThread(bus.store, threadId);
    const holder = threadByName(bus.store, name);
    if (holder !== undefined && holder.topic_id !== threadId) {
      throw new BusError("THREAD_TOPIC_IN_USE", `Thread topic '${name}' already exists`);
    }
    renameTopic(bus.store, { topicId: threadId, name });
    bumpTopicsVersion(bus.store);
    return toThread(requireThread(bus.store, threadId));
  }, { topics: [threadId] });
}

/**
 * `thread_delete`: the thread, its messages and everything hanging off them.
 *
 * @throws {BusError} `INVALID_ARGUMENT` without `confirm`, `THREAD_NOT_FOUND`
 */
export async function threadDelete(bus: Bus, threadId: string, confirm: boolean): Promise<void> {
  if (!confirm) {
    throw invalidArgument("Deletion aborted: confirm must be true. This action is irreversible");
  }
  await write(bus, () => {
    requireThread(bus.store, threadId);
    deleteTopicRows(bus.store, threadId);
    bumpTopicsVersion(bus.store);
  });
}

/**
 * `thread_set_state` / `thread_archive`: any state from any state; a closed thread reopens.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function threadSetState(bus: Bus, threadId: string, state: string): Promise<Thread> {
  if (!(THREAD_STATES as readonly string[]).includes(state)) {
    throw invalidArgument(`state must be one of ${THREAD_STATES.join(", ")}`);
  }
  return await write(bus, () => {
    const before = requireThread(bus.store, threadId);
    if (before.topic_status === "closed") reopenTopic(bus.store, threadId);
    setThreadState(bus.store, { topicId: threadId, state, now: bus.now() });
    bumpTopicsVersion(bus.store);
    return toThread(getThread(bus.store, threadId)!);
  });
}

/**
 * `thread_close`: closed with an optional summary; messages stay, posting stops.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`
 */
export async function threadClose(
  bus: Bus,
  threadId: string,
  summary: string | undefined,
): Promise<Thread> {
  const text = cleanOptionalText(summary, "summary", MAX_PROMPT_CHARS);
  return await write(bus, () => {
    requireThread(bus.store, threadId);
    const now = bus.now();
    closeTopic(bus.store, { topicId: threadId, closedAt: now, reason: text });
    setThreadState(bus.store, {
      topicId: threadId,
      state: "closed",
      summary: summary === undefined ? undefined : text,
      now,
    });
    bumpTopicsVersion(bus.store);
    return toThread(getThread(bus.store, threadId)!);
  });
}

/**
 * `close_meeting`: {@linkcode threadClose} for the thread's admin only.
 *
 * @throws {BusError} `AUTHENTICATION_REQUIRED`, `THREAD_NOT_FOUND`, `FORBIDDEN`
 */
export async function closeMeeting(
  bus: Bus,
  args: { threadId: string; agentId: string; token: string; summary?: string | undefined },
): Promise<Thread> {
  bus.store.read(() => {
    authenticate(bus.store, args.agentId, args.token);
    const thread = requireThread(bus.store, args.threadId);
    if (thread.creator_admin_id !== args.agentId) {
      throw new BusError("FORBIDDEN", "Only the thread administrator can close this meeting.", {
        context: { thread_id: args.threadId },
      });
    }
  });
  return await threadClose(bus, args.threadId, args.summary);
}

/** `thread_wait_state_get`: who is blocked in `msg_wait` now (expired waits pruned first). */
export async function threadWaitStates(bus: Bus, threadId: string): Promise<{
  thread_id: string;
  agents_waiting: { agent_id: string; entered_at: string; timeout_ms: number }[];
  count: number;
}> {
  const rows = await write(bus, () => {
    requireThread(bus.store, threadId);
    const now = bus.now();
    pruneChatWaits(bus.store, { topicId: threadId, now });
    return chatWaits(bus.store, { topicId: threadId, now });
  });
  return {
    thread_id: threadId,
    agents_waiting: rows.map((row) => ({
      agent_id: row.agent_id,
      entered_at: iso(row.entered_at),
      timeout_ms: row.timeout_ms,
    })),
    count: rows.length,
  };
}

/** How long "typing" shows without being said again. */
export const TYPING_SECONDS = 10;

/**
 * `agent_set_typing`: show (or stop showing) that an agent is writing in a
 * thread; the console shows it beside the agent's presence. A registered
 * agent shows under its name; any other id as given.
 *
 * @throws {BusError} `THREAD_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function setAgentTyping(
  bus: Bus,
  args: { threadId: string; agentId: string; isTyping: boolean },
): Promise<void> {
  const id = cleanName(args.agentId, "agent_id", 64);
  await write(bus, () => {
    requireThread(bus.store, args.threadId);
    const agentName = getAgent(bus.store, id)?.name ?? id;
    if (args.isTyping) {
      setTyping(bus.store, {
        topicId: args.threadId,
        agentName,
        until: bus.now() + TYPING_SECONDS,
      });
    } else {
      clearTyping(bus.store, { topicId: args.threadId, agentName });
    }
  });
}

// -------------------------------------------------------------- templates

/**
 * Delete a custom template.
 *
 * @throws {BusError} `FORBIDDEN` for a built-in one, `TEMPLATE_NOT_FOUND`
 */
export async function templateDelete(bus: Bus, id: string): Promise<void> {
  if (BUILTIN_TEMPLATES.some((t) => t.id === id)) {
    throw new BusError("FORBIDDEN", `Template '${id}' is built in and cannot be deleted`);
  }
  const deleted = await write(bus, () => deleteTemplate(bus.store, id));
  if (!deleted) {
    throw new BusError("TEMPLATE_NOT_FOUND", `Template '${id}' not found`, {
      context: { template_id: id },
    });
  }
}

/** Built-ins and then custom templates. */
export function templateList(bus: Bus): Template[] {
  const custom = bus.store.read(() => listTemplates(bus.store, 1000));
  return [...BUILTIN_TEMPLATES, ...custom.map(toTemplate)];
}

/** Most templates on one page of `template_list` (the result budget may cut it shorter). */
const TEMPLATE_PAGE = 200;

/**
 * Templates, the built-ins first and then custom ones as they were made,
 * after `cursor` (an earlier page's `next_cursor`), as many as fit `budget`
 * bytes of JSON.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a cursor that is not one
 */
export function templatePage(
  bus: Bus,
  { cursor, budget }: { cursor?: string | undefined; budget: number },
): { templates: Template[]; next_cursor: string | null; cut: boolean } {
  const after = cursor === undefined ? undefined : parseCursor(cursor, "template_list");
  // (A built-in's cursor is -1 and its place among them; a custom one's, its creation time and id.)
  const builtinsFrom = after === undefined ? 0 : after.at === -1 ? Number(after.key) + 1 : Infinity;
  if (!Number.isSafeInteger(builtinsFrom) && builtinsFrom !== Infinity) {
    throw invalidArgument("cursor must be the next_cursor of an earlier template_list call");
  }
  const builtins = BUILTIN_TEMPLATES.slice(Math.min(builtinsFrom, BUILTIN_TEMPLATES.length));
  const customAfter = after === undefined || after.at === -1 ? undefined : after;
  const rows = bus.store.read(() => listTemplates(bus.store, TEMPLATE_PAGE + 1, customAfter));
  const candidates = [
    ...builtins.map((template, i) => ({ template, key: encodeCursor(-1, builtinsFrom + i) })),
    ...rows.map((row) => ({
      template: toTemplate(row),
      key: encodeCursor(row.created_at, row.id),
    })),
  ];
  const page = candidates.slice(0, TEMPLATE_PAGE);
  const { items, cut } = fitJson(page.map((c) => c.template), budget);
  const more = cut || candidates.length > TEMPLATE_PAGE;
  return {
    templates: items,
    next_cursor: more && items.length > 0 ? page[items.length - 1]!.key : null,
    cut,
  };
}

/**
 * One template.
 *
 * @throws {BusError} `TEMPLATE_NOT_FOUND`
 */
export function requireTemplate(bus: Bus, id: string): Template {
  const builtin = BUILTIN_TEMPLATES.find((t) => t.id === id);
  if (builtin) return builtin;
  const row = id.length <= MAX_TEMPLATE_ID_CHARS
    ? bus.store.read(() => getTemplate(bus.store, id))
    : undefined;
  if (!row) {
    throw new BusError("TEMPLATE_NOT_FOUND", `Template '${id}' not found`, {
      context: { template_id: id },
    });
  }
  return toTemplate(row);
}

/**
 * `template_create`: a custom template (a custom id is replaced; a built-in one refused).
 *
 * @throws {BusError} `INVALID_ARGUMENT`
 */
export async function templateCreate(bus: Bus, args: {
  id: string;
  name: string;
  description?: string | undefined;
  system_prompt?: string | undefined;
  default_metadata?: Record<string, unknown> | undefined;
}): Promise<Template> {
  const id = cleanName(args.id, "id", MAX_TEMPLATE_ID_CHARS);
  if (BUILTIN_TEMPLATES.some((t) => t.id === id)) {
    throw invalidArgument(`Template '${id}' is built in and cannot be replaced`);
  }
  const row: TemplateRow = {
    id,
    name: cleanName(args.name, "name", MAX_TEMPLATE_ID_CHARS),
    description: cleanOptionalText(args.description, "description", MAX_PROMPT_CHARS),
    system_prompt: screenOptional(
      cleanOptionalText(args.system_prompt, "system_prompt", MAX_PROMPT_CHARS),
      contentFilter(bus.config, "system_prompt"),
    ),
    default_metadata_json: metadataJson(
      args.default_metadata,
      "default_metadata",
      bus.config.maxMetadataChars,
    ),
    created_at: bus.now(),
  };
  await write(bus, () => putTemplate(bus.store, row));
  return toTemplate(row);
}

function toTemplate(row: TemplateRow): Template {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    system_prompt: row.system_prompt,
    default_metadata: parseMetadata(row.default_metadata_json),
    is_builtin: false,
    created_at: iso(row.created_at),
  };
}
