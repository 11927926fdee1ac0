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
import { type ChunkReader, chunksOf } from "../direct_io.ts";
import { framesOf, tooLargeReply } from "../frame_reader.ts";
import { LOG_LINE_START, STATE_LINE_START } from "./protocol.ts";

/** A connection to a bus: how to write to it and end it, and what it says after its welcome. */
export interface BusLink {
  /** Write bytes (writes go out in the order asked). */
  write(bytes: Uint8Array): Promise<void>;
  /** End the session: the bus sees the end of its input. */
  end(): void;
  reader: ChunkReader;
}

/** Attach again, carrying `state` (throws when no bus could be reached). */
export type Reconnect = (state: SessionState | undefined) => Promise<BusLink>;

/** Ids of the relay's own `initialize` replays. */
const REPLAY_PREFIX = "agent-bus-replay-";
/** How long the relay keeps trying to reach a bus before it gives the session up. */
const RECONNECT_MS = 60_000;

/** The entry's side of its stdio (writes go out in the order asked). */
export interface RelayStdio {
  stdin: ChunkReader;
  stdout: (bytes: Uint8Array) => Promise<void>;
  /** Longest client message (the bus's own limit). */
  maxBytes: number;
  /** Where the session's log lines go (the entry's stderr). */
  stderr?: (bytes: Uint8Array) => Promise<void>;
}

/**
 * Relay stdio to the bus behind `link` until the client or the session ends;
 * `stop` resolves when the relay should end its session as if the client
 * had gone (a signal).
 */
export async function relay(
  link: BusLink,
  reconnect: Reconnect,
  stdio: RelayStdio,
  stop?: Promise<void>,
): Promise<void> {
  const session = new RelayedSession(link, reconnect, stdio);
  const down = session.fromBus();
  session.toBus().catch(() => {});
  // (The bus ends the session once the entry's side closes, then closes its own: `down` ends.)
  stop?.then(() => session.end());
  await down;
}

/** One relayed session: what it keeps to carry itself on to another bus. */
class RelayedSession {
  readonly #reconnect: Reconnect;
  readonly #stdio: RelayStdio;
  readonly #encoder = new TextEncoder();
  #current: BusLink;
  /** Resolves once the bus link is usable (while it is carried on, client lines wait). */
  #ready: Promise<void> = Promise.resolve();
  #clientDone = false;
  #state: SessionState | undefined;
  #initialize: Record<string, unknown> | undefined;
  #initialized: string | undefined;
  readonly #inflight = new Map<string | number, string>();
  #replays = 0;
  #sent = 0;
  readonly #tag = `${Deno.pid}-${Date.now().toString(36)}`;

  constructor(link: BusLink, reconnect: Reconnect, stdio: RelayStdio) {
    this.#current = link;
    this.#reconnect = reconnect;
    this.#stdio = stdio;
  }

  /** End the session as if the client had gone. */
  end(): void {
    this.#clientDone = true;
    this.#current.end();
  }

  /** The client's messages to the bus; the client may frame them by lines or `Content-Length`. */
  async toBus(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const frame of framesOf(this.#stdio.stdin, this.#stdio.maxBytes)) {
      if (frame.kind === "oversized") {
        const reply = tooLargeReply(frame.head, this.#stdio.maxBytes);
        await this.#stdio.stdout(this.#encoder.encode(`${JSON.stringify(reply)}\n`));
        continue;
      }
      const line = oneLine(decoder.decode(frame.bytes));
      if (line === "") continue;
      await this.#ready;
      void this.#write(this.#current, this.#fromClient(line));
    }
    this.end();
  }

  /** The bus's lines to the client, until the session ends; a bus that dies is replaced. */
  async fromBus(): Promise<void> {
    for (;;) {
      for await (const line of linesOf(this.#current.reader)) await this.#fromBusLine(line);
      if (this.#clientDone) return;
      await this.#carryOn();
    }
  }

  /** A client line as it goes to the bus, noted for a replay. */
  #fromClient(line: string): string {
    const message = parse(line);
    if (!message || typeof message.method !== "string") return line;
    if (message.method === "initialize") this.#initialize = message;
    if (message.method === "notifications/initialized") this.#initialized = line;
    const id = message.id;
    if (typeof id !== "string" && typeof id !== "number") return line;
    if (
      message.method === "tools/call" && stampSends(message, () => `${this.#tag}-${++this.#sent}`)
    ) {
      line = JSON.stringify(message);
    }
    this.#inflight.set(id, line);
    return line;
  }

  async #fromBusLine(line: string): Promise<void> {
    if (line.startsWith(STATE_LINE_START)) {
      this.#state = (parse(line)?.params as SessionState | undefined) ?? this.#state;
      return;
    }
    if (line.startsWith(LOG_LINE_START)) {
      const logged = (parse(line)?.params as { line?: unknown } | undefined)?.line;
      if (typeof logged === "string") await this.#stdio.stderr?.(this.#encoder.encode(logged));
      return;
    }
    const message = parse(line);
    const id = message && !("method" in message) ? message.id : undefined;
    if (typeof id === "string" && id.startsWith(REPLAY_PREFIX)) return;
    if (typeof id === "string" || typeof id === "number") this.#inflight.delete(id);
    await this.#stdio.stdout(this.#encoder.encode(`${line}\n`));
  }

  /** The bus is gone while the client still talks: attach again and replay what is pending. */
  async #carryOn(): Promise<void> {
    let resume!: () => void;
    this.#ready = new Promise((resolve) => resume = resolve);
    const deadline = Date.now() + RECONNECT_MS;
    for (;;) {
      try {
        this.#current = await this.#reconnect(this.#state);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    if (this.#initialize) {
      const replay = { ...this.#initialize, id: `${REPLAY_PREFIX}${++this.#replays}` };
      void this.#write(this.#current, JSON.stringify(replay));
    }
    if (this.#initialized) void this.#write(this.#current, this.#initialized);
    for (const line of this.#inflight.values()) void this.#write(this.#current, line);
    resume();
  }

  #write(link: BusLink, line: string): Promise<void> {
    return link.write(this.#encoder.encode(`${line}\n`)).catch(() => {});
  }
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
 * The lines `reader` gives (without their newline), each byte looked at
 * once; a connection that fails ends like one that closed.
 */
async function* linesOf(reader: ChunkReader): AsyncGenerator<string> {
  let rest = "";
  const decoder = new TextDecoder();
  try {
    for await (const bytes of chunksOf(reader)) {
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
