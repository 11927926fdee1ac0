/**
 * The entry's relay: its client's MCP lines to the resident bus and back,
 * carrying the session on to a new bus when its bus dies.
 *
 * The bus's log lines of the session go to the entry's stderr.
 *
 * It keeps what that takes, and only that: the client's `initialize` (and
 * `notifications/initialized`), the requests not answered yet, and the
 * session's state as the bus last told it (its names and their tokens, in
 * a line it does not forward). When the bus's end closes while the client's
 * is open, it attaches again (`reconnect`, which starts a bus when none
 * runs) with that state, says `initialize` again under an id of its own
 * (its answer is dropped), and sends the unanswered requests again: the
 * client sees those calls answered late, as the same agent. A `sync` that
 * sends is given a `client_message_id` per message when it has none, the
 * first time it passes, so that sending it again stores it once.
 *
 * @module
 */

import type { SessionState } from "../../bus/session.ts";
import { framesOf, tooLargeReply } from "../frame_reader.ts";
import { LOG_LINE_START, STATE_LINE_START } from "./protocol.ts";

/** A line-level connection to a bus: where to write, and what it says after its welcome. */
export interface BusLink {
  writer: WritableStreamDefaultWriter<Uint8Array>;
  lines: ReadableStream<Uint8Array>;
}

/** Attach again, carrying `state` (throws when no bus could be reached). */
export type Reconnect = (state: SessionState | undefined) => Promise<BusLink>;

/** Ids of the relay's own `initialize` replays. */
const REPLAY_PREFIX = "agent-bus-replay-";
/** How long the relay keeps trying to reach a bus before it gives the session up. */
const RECONNECT_MS = 60_000;

/** Relay stdio to the bus behind `link` until the client or the session ends. */
export async function relay(
  link: BusLink,
  reconnect: Reconnect,
  stdio: {
    stdin: ReadableStream<Uint8Array>;
    stdout: WritableStream<Uint8Array>;
    /** Longest client message (the bus's own limit). */
    maxBytes: number;
    /** Where the session's log lines go (the entry's stderr). */
    stderr?: WritableStreamDefaultWriter<Uint8Array>;
  },
  /** Resolves when the relay should end its session as if the client had gone (a signal). */
  stop?: Promise<void>,
): Promise<void> {
  const encoder = new TextEncoder();
  const out = stdio.stdout.getWriter();
  let current = link;
  let ready: Promise<void> = Promise.resolve();
  let clientDone = false;
  let state: SessionState | undefined;
  let initialize: Record<string, unknown> | undefined;
  let initialized: string | undefined;
  const inflight = new Map<string | number, string>();
  let replays = 0;
  let sent = 0;
  const tag = `${Deno.pid}-${Date.now().toString(36)}`;

  /** A client line as it goes to the bus, noted for a replay. */
  const fromClient = (line: string): string => {
    const message = parse(line);
    if (!message || typeof message.method !== "string") return line;
    if (message.method === "initialize") initialize = message;
    if (message.method === "notifications/initialized") initialized = line;
    const id = message.id;
    if (typeof id !== "string" && typeof id !== "number") return line;
    if (message.method === "tools/call" && stampSends(message, () => `${tag}-${++sent}`)) {
      line = JSON.stringify(message);
    }
    inflight.set(id, line);
    return line;
  };

  const write = (link: BusLink, line: string) =>
    link.writer.write(encoder.encode(`${line}\n`)).catch(() => {});

  // The client may frame its messages by lines or by `Content-Length`: each goes on as a line.
  const toBus = async () => {
    const decoder = new TextDecoder();
    for await (const frame of framesOf(stdio.stdin.getReader(), stdio.maxBytes)) {
      if (frame.kind === "oversized") {
        const reply = tooLargeReply(frame.head, stdio.maxBytes);
        await out.write(encoder.encode(`${JSON.stringify(reply)}\n`));
        continue;
      }
      const line = oneLine(decoder.decode(frame.bytes));
      if (line === "") continue;
      await ready;
      void write(current, fromClient(line));
    }
    clientDone = true;
    await current.writer.close().catch(() => {});
  };

  const fromBus = async () => {
    for (;;) {
      for await (const line of linesOf(current.lines)) {
        if (line.startsWith(STATE_LINE_START)) {
          state = (parse(line)?.params as SessionState | undefined) ?? state;
          continue;
        }
        if (line.startsWith(LOG_LINE_START)) {
          const logged = (parse(line)?.params as { line?: unknown } | undefined)?.line;
          if (typeof logged === "string") await stdio.stderr?.write(encoder.encode(logged));
          continue;
        }
        const message = parse(line);
        const id = message && !("method" in message) ? message.id : undefined;
        if (typeof id === "string" && id.startsWith(REPLAY_PREFIX)) continue;
        if (typeof id === "string" || typeof id === "number") inflight.delete(id);
        await out.write(encoder.encode(`${line}\n`));
      }
      if (clientDone) return;
      // The bus is gone while the client still talks: carry the session on.
      let resume!: () => void;
      ready = new Promise((resolve) => resume = resolve);
      const deadline = Date.now() + RECONNECT_MS;
      for (;;) {
        try {
          current = await reconnect(state);
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      if (initialize) {
        void write(current, JSON.stringify({ ...initialize, id: `${REPLAY_PREFIX}${++replays}` }));
      }
      if (initialized) void write(current, initialized);
      for (const line of inflight.values()) void write(current, line);
      resume();
    }
  };

  const down = fromBus();
  toBus().catch(() => {});
  // (The bus ends the session once the entry's side closes, then closes its own: `down` ends.)
  stop?.then(() => {
    clientDone = true;
    current.writer.close().catch(() => {});
  });
  await down;
}

/**
 * Give each message of a sending `sync` a `client_message_id` if it has
 * none (a retry of the same call then stores it once).
 *
 * @returns whether it changed anything
 */
function stampSends(message: Record<string, unknown>, nextId: () => string): boolean {
  const params = message.params as { name?: unknown; arguments?: unknown } | undefined;
  if (params?.name !== "sync") return false;
  const outbox = (params.arguments as { outbox?: unknown } | undefined)?.outbox;
  if (!Array.isArray(outbox)) return false;
  let changed = false;
  for (const item of outbox) {
    if (item && typeof item === "object" && !("client_message_id" in item)) {
      (item as Record<string, unknown>).client_message_id = nextId();
      changed = true;
    }
  }
  return changed;
}

/** `text` as one line: trimmed, and a JSON body written over several lines joined. */
function oneLine(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.includes("\n")) return trimmed;
  try {
    return JSON.stringify(JSON.parse(trimmed));
  } catch {
    return trimmed.replaceAll(/\r?\n/g, " "); // (not JSON: the bus answers a parse error)
  }
}

/** A JSON object line, or undefined. */
function parse(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line);
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The lines of `stream` (without their newline), each byte looked at once;
 * a stream that fails ends like one that closed.
 */
async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  const decoder = new TextDecoder();
  try {
    for await (const bytes of stream) {
      const chunk = decoder.decode(bytes, { stream: true });
      let from = 0;
      let newline = chunk.indexOf("\n");
      while (newline >= 0) {
        const line = rest + chunk.slice(from, newline);
        rest = "";
        if (line.trim()) yield line;
        from = newline + 1;
        newline = chunk.indexOf("\n", from);
      }
      rest += chunk.slice(from);
    }
  } catch {
    // (a connection reset: the end)
  }
  if (rest.trim()) yield rest;
}
