/**
 * `msg_wait`: a chatbus agent waits for messages after a position.
 *
 * It follows AgentChatBus's fast-return rules (research 2.9): it returns at
 * once when messages exist after `after_seq`, or with none when the agent
 * has a pending refresh request (after a sync error) or holds no token and
 * is behind; a caught-up agent, or a lone agent in an empty thread, waits.
 * While waiting it writes nothing: it waits on the process's change feed,
 * woken within milliseconds by a commit from any process, and stops at once
 * when the client cancels. A wait that times out hands back the token it
 * handed out before.
 *
 * Three steps: one transaction decides (messages now, a fast return, or a
 * wait, recorded for `thread_wait_state_get`); the wait, reading only; and
 * one transaction that closes it and issues the next sync context.
 *
 * @module
 */

import { invalidArgument, type Warning } from "../../errors.ts";
import {
  type AgentRow,
  type ChatMessageRow,
  chatMessagesAfter,
  clearRefreshRequest,
  enterChatWait,
  exitChatWait,
  getAgent,
  getThread,
  invalidateReplyTokens,
  readWaitStart,
  touchAgent,
} from "../../store/chat/mod.ts";
import { clearWaiting, markWaiting, setCursor } from "../../store/cursors.ts";
import { latestSeq } from "../../store/messages.ts";
import { type Bus, write } from "../mod.ts";
import type { Session } from "../session.ts";
import { capWaitSeconds, waitFor, type WaitOptions } from "../waiting.ts";
import { authenticate, isKicked } from "./agents.ts";
import {
  catchUpWindow,
  credentialsOf,
  fitting,
  type ListedMessage,
  listedOf,
  MAX_MESSAGES,
  type SkippedMessages,
} from "./read.ts";
import { foundThreadTopic, requireThread } from "./threads.ts";
import { issueSyncContext, reuseOrIssue } from "./tokens.ts";
import { awaitTurn } from "./turns.ts";
import type { SyncContext } from "./wire.ts";

/** `msg_wait`'s arguments. */
export interface WaitArgs {
  thread_id: string;
  after_seq: number;
  timeout_ms: number;
  agent_id?: string | undefined;
  token?: string | undefined;
  for_agent?: string | undefined;
  /** Read the images too (default true; false skips their data). */
  include_attachments?: boolean | undefined;
}

/** `msg_wait`'s result. */
export interface WaitResult {
  messages: ListedMessage[];
  sync: SyncContext;
  fast_return: boolean;
  has_more: boolean;
  /** Earlier messages left out to show the newest (see {@linkcode catchUpWindow}). */
  skipped: SkippedMessages | undefined;
  warnings: Warning[];
}

/**
 * `msg_wait`.
 *
 * @throws {BusError} `InvalidCredentials`, `THREAD_NOT_FOUND`, `INVALID_ARGUMENT`
 */
export async function waitMessages(
  bus: Bus,
  session: Session,
  args: WaitArgs,
  options: WaitOptions = {},
): Promise<WaitResult> {
  const warnings: Warning[] = [];
  if (args.after_seq < 0) throw invalidArgument("after_seq must be an int >= 0");
  if (args.timeout_ms < 0) throw invalidArgument("timeout_ms must be an int >= 0");
  const seconds = capWaitSeconds(bus, Math.ceil(args.timeout_ms / 1000), warnings);
  const timeoutSeconds = Math.min(args.timeout_ms / 1000, seconds);
  const agent = waitingAgent(bus, session, args);
  const topicId = args.thread_id;
  const scan = new WaitScan(bus, args, agent?.agent_id);

  // Reading (and parsing metadata for for_agent) happens before the write lock; a message
  // committed after this read is seen by the wait's first check.
  const found = bus.store.read(() => {
    requireThread(bus.store, topicId);
    return scan.matching();
  });
  const start = await startWait(bus, { args, agent, found, timeoutSeconds });
  let rows = start.found;
  // An agent that just lost a race and owes another its turn reads on after that agent posts,
  // so it races for the next message instead of losing this one again.
  if (start.refresh && agent !== undefined && timeoutSeconds > 0) {
    await awaitTurn(bus, topicId, agent.agent_id, timeoutSeconds);
    rows = bus.store.read(() => scan.matching()) ?? rows;
  }
  if (start.waits) {
    rows = await waitForMatching(bus, scan, { topicId, agent, timeoutSeconds, options });
  }
  if (scan.kicked) {
    warnings.push({
      code: "AGENT_KICKED",
      message: "An operator marked you offline (POST /api/agents/{id}/kick), which ended this " +
        "wait; your next call brings you back online",
    });
  }
  const delivered = rows ?? [];
  // Catching up (no for_agent filter): the newest messages that fit, and a count of the rest.
  const window = args.for_agent === undefined && delivered.length > 0
    ? bus.store.read(() =>
      catchUpWindow(bus, { topicId, afterSeq: args.after_seq, rows: delivered })
    )
    : undefined;
  const page = window?.rows ?? delivered.slice(0, fitting(bus, delivered));
  const cut = window === undefined && page.length < delivered.length;
  const sync = await closeWait(bus, session, {
    topicId,
    agent,
    page,
    latest: start.latest,
    stopsAtPage: window !== undefined || cut,
  });
  // Reactions, names and images (up to megabytes) are read after the write lock is released.
  return {
    messages: bus.store.read(() =>
      listedOf(bus.store, page, args.include_attachments ?? true, bus.config.maxAttachmentBytes)
    ),
    sync,
    fast_return: start.fast,
    has_more: cut,
    skipped: window?.skipped,
    warnings,
  };
}

/**
 * What a wait looks for: the messages after its position (with
 * `for_agent`, those handed to that agent, the position moving past the
 * rest), or an end: a kick once the wait is recorded, or the thread deleted.
 */
class WaitScan {
  readonly #bus: Bus;
  readonly #args: WaitArgs;
  readonly #agentId: string | undefined;
  #from: number;
  /** Set once the wait is recorded (its start marked the agent active): a kick after it ends it. */
  waiting = false;
  /** The wait ended because an operator kicked the agent. */
  kicked = false;

  constructor(bus: Bus, args: WaitArgs, agentId: string | undefined) {
    this.#bus = bus;
    this.#args = args;
    this.#agentId = agentId;
    this.#from = args.after_seq;
  }

  /** Call inside a read: the rows to deliver, `[]` to end with none, undefined to go on waiting. */
  matching(): ChatMessageRow[] | undefined {
    const { store } = this.#bus;
    const forAgent = this.#args.for_agent;
    const topicId = this.#args.thread_id;
    const rows = chatMessagesAfter(store, { topicId, afterSeq: this.#from, limit: MAX_MESSAGES });
    const found = forAgent === undefined
      ? rows
      : rows.filter((row) => handoffTarget(row) === forAgent);
    if (found.length === 0 && rows.length > 0 && forAgent !== undefined) {
      this.#from = rows.at(-1)!.seq;
    }
    if (found.length > 0) return found;
    // Woken with nothing to deliver: a kick, or the thread deleted, ends the wait (the final
    // transaction then says THREAD_NOT_FOUND).
    if (this.waiting && isKicked(store, this.#agentId!)) {
      this.kicked = true;
      return [];
    }
    return getThread(store, topicId) ? undefined : [];
  }
}

/** How a wait starts, decided in one transaction. */
interface WaitStart {
  /** The thread's latest seq then. */
  latest: number;
  /** Messages there already (undefined: none). */
  found: ChatMessageRow[] | undefined;
  /** It waits (recorded, for `thread_wait_state_get` and the console's presence). */
  waits: boolean;
  /** The agent has a refresh request pending (after a sync error). */
  refresh: boolean;
  /** It returns at once with nothing, though it could have waited. */
  fast: boolean;
}

/** Decide in one transaction: messages now, a fast return, or a wait (recorded). */
async function startWait(
  bus: Bus,
  { args, agent, found, timeoutSeconds }: {
    args: WaitArgs;
    agent: AgentRow | undefined;
    found: ChatMessageRow[] | undefined;
    timeoutSeconds: number;
  },
): Promise<WaitStart> {
  const topicId = args.thread_id;
  return await write(bus, () => {
    const context = readWaitStart(bus.store, { topicId, agentId: agent?.agent_id });
    foundThreadTopic(context.topic, topicId);
    const latest = context.latest;
    const behindWithoutToken = agent !== undefined && !context.holdsToken &&
      args.after_seq < latest;
    const refresh = context.refresh !== undefined;
    const waits = !found && !refresh && !behindWithoutToken && timeoutSeconds > 0;
    if (agent !== undefined) {
      const now = bus.now();
      touchAgent(bus.store, {
        agentId: agent.agent_id,
        activity: "msg_wait",
        now,
        heartbeat: true,
      });
      if (waits) {
        enterChatWait(bus.store, {
          topic_id: topicId,
          agent_id: agent.agent_id,
          entered_at: now,
          timeout_ms: args.timeout_ms,
          until: now + timeoutSeconds,
        });
        // The console's presence shows it waiting, like a peer in `sync`.
        markWaiting(bus.store, { topicId, agentName: agent.name, until: now + timeoutSeconds });
      }
    }
    return { latest, found, waits, refresh, fast: !found && !waits && timeoutSeconds > 0 };
  }, { topics: [topicId] });
}

/** Wait for what `scan` looks for; a wait that fails (cancelled, say) is taken off the record. */
async function waitForMatching(
  bus: Bus,
  scan: WaitScan,
  { topicId, agent, timeoutSeconds, options }: {
    topicId: string;
    agent: AgentRow | undefined;
    timeoutSeconds: number;
    options: WaitOptions;
  },
): Promise<ChatMessageRow[] | undefined> {
  scan.waiting = agent !== undefined;
  bus.log.debug("msg_wait waiting", { thread_id: topicId, agent_id: agent?.agent_id ?? null });
  try {
    return await waitFor(bus, () => bus.store.read(() => scan.matching()), timeoutSeconds, {
      ...options,
      topics: [topicId],
    });
  } catch (error) {
    if (agent !== undefined) {
      await write(bus, () => {
        exitChatWait(bus.store, { topicId, agentId: agent.agent_id });
        clearWaiting(bus.store, { topicId, agentName: agent.name });
      }, { topics: [topicId] }).catch(() => {});
    }
    throw error;
  }
}

/**
 * Close the wait in one transaction and issue the next sync context: a
 * wait that delivered nothing while the thread did not move hands back the
 * token it handed out before.
 */
async function closeWait(
  bus: Bus,
  session: Session,
  { topicId, agent, page, latest, stopsAtPage }: {
    topicId: string;
    agent: AgentRow | undefined;
    page: ChatMessageRow[];
    latest: number;
    /** The context stops at the page's last message (a window, or a page cut to the budget). */
    stopsAtPage: boolean;
  },
): Promise<SyncContext> {
  return await write(bus, () => {
    const store = bus.store;
    requireThread(store, topicId); // deleted while waiting: say so, and issue nothing
    const now = bus.now();
    let sync: SyncContext;
    if (agent === undefined) {
      sync = issueSyncContext(bus, session, { topicId, agentId: null, source: "msg_wait" });
    } else {
      const agentId = agent.agent_id;
      exitChatWait(store, { topicId, agentId });
      clearWaiting(store, { topicId, agentName: agent.name });
      clearRefreshRequest(store, { topicId, agentId });
      if (page.length === 0 && latestSeq(store, topicId) === latest) {
        sync = reuseOrIssue(bus, session, { topicId, agentId });
      } else {
        invalidateReplyTokens(store, { topicId, agentId, now });
        sync = issueSyncContext(bus, session, { topicId, agentId, source: "msg_wait" });
      }
    }
    // The context stops at the last message shown: one that committed after the read makes
    // a post with it fail with that message instead of skipping it (and a for_agent page cut
    // to the budget stops there too).
    if (stopsAtPage) sync = { ...sync, current_seq: page.at(-1)!.seq };
    // Its read position, for presence in the console and `topic_presence`.
    if (agent !== undefined) {
      setCursor(store, { topicId, agentName: agent.name, lastSeq: sync.current_seq, now });
      // Last, after every read: on PostgreSQL it goes out with COMMIT (see `store/postgres/locks.ts`).
      if (page.length > 0) {
        touchAgent(store, { agentId: agent.agent_id, activity: "msg_received", now });
      }
    }
    return sync;
  }, { topics: [topicId] });
}

/** The agent a message is handed to (`metadata.handoff_target`), if any. */
function handoffTarget(row: ChatMessageRow): unknown {
  if (!row.metadata_json?.includes("handoff_target")) return undefined;
  try {
    return (JSON.parse(row.metadata_json) as Record<string, unknown>).handoff_target;
  } catch {
    return undefined;
  }
}

/** The agent a `msg_wait` is for: explicit credentials (both), else the session's, else none. */
function waitingAgent(bus: Bus, session: Session, args: WaitArgs): AgentRow | undefined {
  if (args.agent_id === undefined && args.token === undefined) {
    const bound = session.chatAgent;
    return bound && bus.store.read(() => getAgent(bus.store, bound.agentId));
  }
  const credentials = credentialsOf(session, args, "InvalidCredentials");
  const agent = bus.store.read(() =>
    authenticate(bus.store, credentials.agentId, credentials.token, "InvalidCredentials")
  );
  session.chatAgent = credentials;
  return agent;
}
