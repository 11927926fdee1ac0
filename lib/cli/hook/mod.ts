/**
 * `agent-bus hook <client> <event>`: the command a client runs as a hook,
 * so that an agent hears about messages for it without having to call a
 * tool first.
 *
 * - On a stop (`Stop`, Gemini's `AfterAgent`): when something new is
 *   unread for this agent, block the stop and hand the model a short reason
 *   (who wrote, where, the first lines, the tool call to read and answer).
 *   Loop-safe: an item already reported does not block again, and at most
 *   `--max-blocks` stops in a row are blocked (the client's re-entry flag,
 *   `stop_hook_active`, says whether a stop follows a block). With
 *   `--wait SECONDS` ("on call"), when nothing new is unread, the hook waits
 *   that long for something to arrive (the same zero-cost wake as `sync`)
 *   before letting the agent stop.
 * - On a prompt or a session start: one line of context.
 *
 * "This agent" is the session a stdio server recorded (see
 * `lib/bus/attendance.ts`): the one whose client process is the hook's
 * nearest ancestor, else the one started in the hook's working directory.
 *
 * It loads only what it needs (it runs on every turn), speaks only JSON on
 * stdout, and never fails the client's turn: on any internal error it
 * writes one line to stderr and lets the client go on (exit 0).
 *
 * @module
 */

import { processPlace } from "../../bus/attendance.ts";
import {
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
import { loadConfig } from "../../config.ts";
import { createLogger } from "../../log.ts";
import { hookWatchOf } from "../../mcp/profiles/hooks.ts";
import { closeBusRuntime, openBusRuntime } from "../../bus_runtime.ts";
import { type ProcessTree, readProcessTree } from "./process_tree.ts";
import {
  HOOK_CLIENTS,
  type HookClient,
  type HookInput,
  type HookKind,
  type HookProtocol,
  kindOf,
  parseHookInput,
  PROTOCOLS,
} from "./protocols.ts";
import { contextLine, STOP_REASON_HEADER, stopReason } from "./reason.ts";
import { type HookTrace, recordDir, writeRecord } from "./record.ts";

/** Stops blocked in a row unless `--max-blocks` says otherwise. */
export const DEFAULT_MAX_BLOCKS = 5;
/** The longest on-call wait. */
export const MAX_WAIT_SECONDS = 3600;
/** Stdin beyond this is not read (a hook's input is a few KB; Gemini's carries the response). */
const MAX_INPUT_BYTES = 4 * 1024 * 1024;

export const HOOK_USAGE = `Usage: agent-bus hook <${HOOK_CLIENTS.join("|")}> <event> [options]

Run by a client as a hook (agent-bus install <client> --hooks writes the entries). Events:
  claude-code, codex   Stop, UserPromptSubmit, SessionStart
  gemini               AfterAgent, BeforeAgent, SessionStart

Options:
  --db PATH            The database (default: AGENT_BUS_DB, else ~/.agent_bus/bus.sqlite)
  --wait SECONDS       On a stop with nothing new unread, wait this long for a message (on call)
  --max-blocks N       Stops blocked in a row at most (default ${DEFAULT_MAX_BLOCKS})`;

/** What the hook writes and how it exits. */
export interface HookOutcome {
  stdout: unknown;
  code: number;
}

async function readInput(stdin: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    if (size < MAX_INPUT_BYTES) chunks.push(chunk);
    size += chunk.length;
  }
  if (size > MAX_INPUT_BYTES) return "{}";
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(all);
}

/** The hook's options. */
interface HookArgs {
  values: { db?: string; wait?: string; "max-blocks"?: string; help?: boolean };
  positionals: string[];
}

/**
 * Read `<client> <event> [--db P] [--wait S] [--max-blocks N] [--help]` (by
 * hand: Node's `parseArgs` alone costs the hook a third of its start-up).
 *
 * @returns the arguments, or what is wrong with them
 */
export function parseHookArgs(args: string[]): HookArgs | string {
  const values: HookArgs["values"] = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") {
      values.help = true;
      continue;
    }
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    if (name !== "db" && name !== "wait" && name !== "max-blocks") return `Unknown option ${arg}`;
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) return `${arg} needs a value`;
    values[name] = value;
  }
  return { values, positionals };
}

function positiveInt(value: string | undefined, name: string, max: number, fallback: number) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    throw new RangeError(`${name} must be an integer from 0 to ${max}`);
  }
  return n;
}

/**
 * Run one hook.
 *
 * @param args the arguments after `hook`
 * @param env the environment
 * @param stdin the hook's input (the client's JSON)
 */
export async function runHook(
  args: string[],
  env: Record<string, string | undefined>,
  stdin: ReadableStream<Uint8Array>,
): Promise<HookOutcome> {
  const log = createLogger("warn", { name: "agent-bus hook" });
  const parsed = parseHookArgs(args);
  if (typeof parsed === "string") {
    log.error(`${parsed}\n${HOOK_USAGE}`);
    return { stdout: {}, code: 1 };
  }
  const { values, positionals } = parsed;
  const [client, event] = positionals as [HookClient | undefined, string | undefined];
  if (values.help) return { stdout: HOOK_USAGE, code: 0 };
  const protocol = client && HOOK_CLIENTS.includes(client) ? PROTOCOLS[client] : undefined;
  const kind = protocol && event ? kindOf(protocol, event) : undefined;
  if (!protocol || !kind || positionals.length !== 2) {
    log.error(`Name a client and one of its events.\n${HOOK_USAGE}`);
    return { stdout: {}, code: 1 };
  }
  try {
    const options = {
      wait: positiveInt(values.wait, "--wait", MAX_WAIT_SECONDS, 0),
      maxBlocks: positiveInt(values["max-blocks"], "--max-blocks", 1000, DEFAULT_MAX_BLOCKS),
    };
    const input = parseHookInput(await readInput(stdin), protocol, env);
    const { config } = loadConfig({ ...env, AGENT_BUS_DB: values.db ?? env.AGENT_BUS_DB });
    if (kind === "prompt" && input.prompt.startsWith(STOP_REASON_HEADER)) {
      // Gemini CLI runs BeforeAgent again with our deny reason as the prompt: the model has
      // the news already, so the database is not even opened.
      writeRecord(recordDir(config, env), {
        ...emptyTrace(client!, protocol.events[kind], input),
        why: "the prompt is the stop hook's own reason, which holds the news",
      }, config.logLevel === "debug");
      return { stdout: {}, code: 0 };
    }
    // `ps` runs in a process of its own while this one opens the database.
    const tree = readProcessTree();
    const runtime = openBusRuntime(config, { log });
    try {
      const { stdout, trace } = await respond(runtime.bus, {
        client: client!,
        protocol,
        kind,
        input,
        tree,
        ...options,
      });
      writeRecord(recordDir(config, env), trace, config.logLevel === "debug");
      return { stdout, code: 0 };
    } finally {
      closeBusRuntime(runtime);
    }
  } catch (error) {
    // Never fail the client's turn: say what went wrong and let it go on.
    log.error(`hook failed: ${(error as Error)?.message ?? error}`);
    return { stdout: {}, code: 0 };
  }
}

/** One hook run, after its arguments and input are read. */
interface HookRun {
  client: HookClient;
  protocol: HookProtocol;
  kind: HookKind;
  input: HookInput;
  /** This process's ancestors and the live pids (started as the run began). */
  tree: Promise<ProcessTree | undefined>;
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

/** What the hook prints (a block, a line of context, or nothing: `{}`), and why. */
async function respond(bus: Bus, run: HookRun): Promise<{ stdout: unknown; trace: HookTrace }> {
  const { protocol, kind, input } = run;
  const host = processPlace().host;
  const { mine, dead, by } = await matchSessions(bus, { host, cwds: input.cwds }, () => run.tree);
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

/** The entry point of `agent-bus hook`: prints the outcome and returns the exit code. */
export async function main(args: string[], env: Record<string, string | undefined>) {
  const outcome = await runHook(args, env, Deno.stdin.readable);
  const text = typeof outcome.stdout === "string" ? outcome.stdout : JSON.stringify(outcome.stdout);
  await Deno.stdout.write(new TextEncoder().encode(`${text}\n`));
  return outcome.code;
}
