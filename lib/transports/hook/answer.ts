/**
 * What a client's hook run is told, wherever it is answered: by the hook's
 * own process over the database (`agent-bus hook` when no resident bus
 * runs), or by the resident bus, which holds the bus open and hears
 * commits in process.
 *
 * - On a stop (`Stop`, Gemini's `AfterAgent`): when something new is
 *   unread for this agent, block the stop and hand the model a short reason
 *   (who wrote, where, the first lines, the tool call to read and answer).
 *   Loop-safe: an item already reported does not block again, and at most
 *   `maxBlocks` stops in a row are blocked (the client's re-entry flag,
 *   `stop_hook_active`, says whether a stop follows a block). With a `wait`
 *   ("on call"), when nothing new is unread, the run waits that long for
 *   something to arrive (the same zero-cost wake as `sync`) before letting
 *   the agent stop.
 * - On a prompt or a session start: one line of context.
 *
 * "This agent" is the session a server recorded (see
 * `lib/bus/attendance.ts`): the one whose client process is the hook's
 * nearest ancestor, else the one started in the hook's working directory.
 * Every answer comes with a {@linkcode HookTrace}: why it was given.
 *
 * @module
 */

import { processPlace } from "../../bus/place.ts";
import {
  type Attachment,
  forgetSessions,
  hookMemory,
  matchSessions,
  rememberHook,
  type SessionsOf,
  unreadFor,
  type UnreadItem,
} from "../../bus/unread.ts";
import type { Bus } from "../../bus/mod.ts";
import { waitFor } from "../../bus/waiting.ts";
import { hookWatchOf } from "../../mcp/profiles/hooks.ts";
import type { ProcessTree } from "./process_tree.ts";
import {
  type HookClient,
  type HookInput,
  type HookKind,
  type HookProtocol,
  kindOf,
  parseHookInput,
  PROTOCOLS,
} from "./protocols.ts";
import { contextLine, STOP_REASON_HEADER, stopReason } from "./reason.ts";

/** A hook run to answer: the client's event, its JSON and the stop options. */
export interface HookAsk {
  client: HookClient;
  /** The client's event name (one of its protocol's). */
  event: string;
  /** The client's JSON, as read from the hook's stdin. */
  input: string;
  /** The hook's environment, where the client names its project directory. */
  env: Record<string, string | undefined>;
  /** On-call wait of a stop, in seconds (0: none). */
  wait: number;
  /** Stops blocked in a row at most. */
  maxBlocks: number;
}

/** What a run saw and decided (kept in the hook record, `record.ts`). */
export interface HookTrace {
  client: string;
  event: string;
  /** The client's session id. */
  session: string;
  /** The recorded server sessions taken as this agent's (their ids), and how they were found. */
  sessions: string[];
  matchedBy: string;
  /** Records of servers that are gone, removed by this run. */
  removed: number;
  /** Markers of what was unread at the first look. */
  first: string[];
  /** The on-call wait: how long it was allowed, how long it took, how many times it looked. */
  wait?: { seconds: number; ms: number; looks: number; deadline: string };
  /** Markers of what was unread at the last look, and when that look began. */
  last: string[];
  lastLookAt: string;
  /** Stops blocked in a row before this one, and the markers already reported. */
  blocks: number;
  reported: string[];
  decision: "block" | "let go" | "context" | "nothing";
  /** Who answered: the hook's own process or the resident bus. */
  by?: "hook" | "bus";
  /** Why the resident bus did not answer, when the hook answered itself. */
  noBus?: string;
  why: string;
}

/** What the hook prints (a block, a line of context, or nothing: `{}`), and why. */
export interface HookAnswer {
  stdout: unknown;
  trace: HookTrace;
}

/**
 * The bus a run reads, opened only when the run needs it: with the hook's
 * parent, the servers the answering process knows to run (a resident bus's
 * attached sessions), and the process tree (the hook's ancestors and the
 * live pids), read only when those do not settle which records are the
 * agent's and which are gone.
 */
export interface HookBus {
  open(): {
    bus: Bus;
    parent: number;
    attached: Attachment[];
    tree(): Promise<ProcessTree | undefined>;
  };
}

/**
 * Answer one hook run.
 *
 * @param from the bus to read, opened only when the run needs it
 * @throws {RangeError} when the client has no such event
 */
export async function answerHook(ask: HookAsk, from: HookBus): Promise<HookAnswer> {
  const protocol = Object.hasOwn(PROTOCOLS, ask.client) ? PROTOCOLS[ask.client] : undefined;
  const kind = protocol && kindOf(protocol, ask.event);
  if (!kind) throw new RangeError(`${ask.client} has no hook event ${ask.event}`);
  const input = parseHookInput(ask.input, protocol, ask.env);
  if (kind === "prompt" && input.prompt.startsWith(STOP_REASON_HEADER)) {
    // Gemini CLI runs BeforeAgent again with our deny reason as the prompt: the model has
    // the news already, so the bus is not even opened.
    return {
      stdout: {},
      trace: {
        ...emptyTrace(ask.client, protocol.events[kind], input),
        why: "the prompt is the stop hook's own reason, which holds the news",
      },
    };
  }
  const { bus, ...origin } = from.open();
  return await respond(bus, { ...ask, protocol, kind, input, origin });
}

/** One hook run, its input read. */
interface HookRun {
  client: HookClient;
  protocol: HookProtocol;
  kind: HookKind;
  input: HookInput;
  origin: Omit<ReturnType<HookBus["open"]>, "bus">;
  wait: number;
  maxBlocks: number;
}

/** A record of a run that has not looked at anything yet. */
function emptyTrace(client: HookClient, event: string, input: HookInput): HookTrace {
  return {
    client,
    event,
    session: input.sessionId,
    sessions: [],
    matchedBy: "",
    removed: 0,
    first: [],
    last: [],
    lastLookAt: "",
    blocks: 0,
    reported: [],
    decision: "nothing",
    why: "",
  };
}

/** What the hook prints, and why. */
async function respond(bus: Bus, run: HookRun): Promise<HookAnswer> {
  const { protocol, kind, input } = run;
  const host = processPlace().host;
  const { parent, attached, tree } = run.origin;
  const { mine, dead, by } = await matchSessions(
    bus,
    { host, cwds: input.cwds, parent, attached },
    tree,
  );
  await forgetSessions(bus, dead);
  const trace: HookTrace = {
    ...emptyTrace(run.client, protocol.events[kind], input),
    sessions: mine.map((row) => row.session_id),
    matchedBy: by,
    removed: dead.length,
  };
  const done = (stdout: unknown, decision: HookTrace["decision"], why: string) => {
    trace.decision = decision;
    trace.why = why;
    return { stdout, trace };
  };
  if (mine.length === 0) return done({}, "nothing", "no server session of this agent recorded");
  // Each look reads the client's sessions again: one its client starts (or restarts) while
  // this hook waits counts too.
  const sessionsOf: SessionsOf = {
    host,
    clients: new Set(mine.map((row) => row.client_pid)),
    gone: new Set(dead.map((row) => row.session_id)),
  };
  const unread = () => {
    const lookAt = new Date().toISOString();
    const items = unreadFor(bus, sessionsOf, hookWatchOf);
    trace.last = items.map((i) => i.marker);
    trace.lastLookAt = lookAt;
    return items;
  };
  if (kind !== "stop") {
    const items = unread();
    return items.length
      ? done(protocol.context(protocol.events[kind], contextLine(items)), "context", "unread")
      : done({}, "nothing", "nothing unread");
  }
  const { stdout, decision, why } = await respondToStop(bus, run, trace, unread);
  return done(stdout, decision, why);
}

/**
 * A stop: block it when something new is unread (waiting for it on call),
 * within the cap; what was reported is remembered for the next stop.
 */
async function respondToStop(
  bus: Bus,
  run: HookRun,
  trace: HookTrace,
  unread: () => UnreadItem[],
): Promise<{ stdout: unknown; decision: HookTrace["decision"]; why: string }> {
  const key = `${run.client}:${run.input.sessionId}`;
  const memory = hookMemory(bus, key);
  // A stop that does not follow a block starts a new count.
  const blocks = run.input.stopHookActive ? memory.blocks : 0;
  trace.blocks = blocks;
  trace.reported = memory.reported;
  const isNew = (items: UnreadItem[]) => items.some((i) => !memory.reported.includes(i.marker));
  let items = unread();
  trace.first = trace.last;
  if (!isNew(items) && run.wait > 0 && blocks < run.maxBlocks) {
    const started = performance.now();
    const wait = {
      seconds: run.wait,
      ms: 0,
      looks: 0,
      deadline: new Date(Date.now() + run.wait * 1000).toISOString(),
    };
    trace.wait = wait;
    items = await waitFor(bus, () => {
      wait.looks++;
      const now = unread();
      return isNew(now) ? now : undefined;
    }, run.wait) ?? unread();
    wait.ms = Math.round(performance.now() - started);
  }
  const markers = items.map((i) => i.marker);
  if (isNew(items) && blocks < run.maxBlocks) {
    await rememberHook(bus, key, { blocks: blocks + 1, reported: markers });
    return { stdout: run.protocol.block(stopReason(items)), decision: "block", why: "new unread" };
  }
  if (memory.blocks !== 0 || markers.some((m) => !memory.reported.includes(m))) {
    await rememberHook(bus, key, { blocks: 0, reported: markers });
  }
  const why = items.length === 0
    ? "nothing unread"
    : !isNew(items)
    ? "everything unread was reported before"
    : `blocked ${blocks} stops in a row (--max-blocks ${run.maxBlocks})`;
  return { stdout: {}, decision: "let go", why };
}
