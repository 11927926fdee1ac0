/**
 * `serveResidentBus()`: one process per database (and version and
 * settings) that serves the stdio sessions of every agent on the host.
 *
 * Entries (`resident/entry.ts`, what an MCP client starts) connect to its
 * Unix socket and relay their client's stdio; each connection is one MCP
 * session, served exactly as a process of its own would serve it
 * (`stdio_session.ts`) by the bus's host (`host.ts`): on SQLite in this
 * thread over one runtime (one database connection, one search indexer,
 * wake-ups between its sessions in process), on PostgreSQL in a fixed pool
 * of session workers (`worker_host.ts`). The session's record (what the
 * hooks read) names the entry and its client, as a process of its own
 * would have named itself.
 *
 * It also answers hook runs (`hook_ask.ts`), over the same host.
 *
 * It says `listening` on stdout once it accepts connections (its starter
 * waits for that line), ends by itself when it has had no session for
 * `idleMs` (or none and its socket is gone or another bus's), on `stop`
 * from `agent-bus bus stop`, or on a signal; and it removes its socket as
 * it goes.
 *
 * @module
 */

import type { ConfigWarning, ResolvedConfig } from "../../config.ts";
import type { SessionState } from "../../bus/session.ts";
import { createLogger } from "../../log.ts";
import { isPostgresUrl } from "../../runtime.ts";
import { onShutdownSignal } from "../../signals.ts";
import { maxMessageBytes } from "../limits.ts";
import type { StdioSession } from "../stdio_session.ts";
import { StdioTransport } from "../stdio_transport.ts";
import { inProcessHost, type SessionChoice, type SessionHost, sessionLog } from "./host.ts";
import { workerHost } from "./worker_host.ts";
import {
  type Attach,
  type BusStatus,
  closeQuietly,
  firstLine,
  type Hello,
  type HookHello,
  type HookReply,
  lineOf,
  LOG_METHOD,
  type ResidentAddress,
  STATE_METHOD,
  VERSION,
  type Welcome,
} from "./protocol.ts";

export type { SessionChoice } from "./host.ts";

/** Options of {@linkcode serveResidentBus}. */
export interface ResidentBusOptions {
  config: ResolvedConfig;
  configWarnings?: ConfigWarning[];
  address: ResidentAddress;
  /** End after this long without a session. */
  idleMs: number;
  /** This bus's settings (`settingsKey()` of its environment). */
  settings: string;
  /**
   * Read a session's serve arguments and settings.
   *
   * @throws {Error} what is wrong with them (`usage` set for a usage error)
   */
  choose(args: string[], env: Record<string, string>): SessionChoice;
  /** Says `listening` where its starter reads (stdout). */
  say(line: string): void;
}

/** How long an entry has to say who it is. */
const HELLO_MS = 10_000;
/** How often the bus looks whether its socket is still its own. */
const ORPHAN_CHECK_MS = 5_000;

/**
 * Serve sessions on the socket until idle, stopped or signalled.
 *
 * @returns once the bus has shut down (its socket removed, its database closed)
 */
export async function serveResidentBus(options: ResidentBusOptions): Promise<void> {
  const { config, address } = options;
  // What the bus logs while it serves a session goes to that session's entry too.
  const logs = sessionLog(config.logLevel);
  const { log } = logs;
  const host: SessionHost = isPostgresUrl(config.dbPath)
    ? workerHost(options, config.resident.workers, log)
    : inProcessHost(options, logs);
  // A bus already there (of another version: it keeps its sessions and ends when idle) or
  // the socket of one that died gives way.
  await Deno.remove(address.socket).catch(() => {});
  const listener = Deno.listen({ transport: "unix", path: address.socket });
  await Deno.chmod(address.socket, 0o600);
  const ours = (await Deno.stat(address.socket)).ino;
  const started = new Date().toISOString();
  const sessions = new Set<StdioSession>();
  /** Hook runs being answered (an on-call stop may wait for minutes). */
  let hooks = 0;
  const { promise: stopped, resolve: stop } = Promise.withResolvers<void>();
  let idle: ReturnType<typeof setTimeout> | undefined;
  const idleCheck = () => {
    clearTimeout(idle);
    idle = sessions.size === 0 && hooks === 0 ? setTimeout(stop, options.idleMs) : undefined;
  };
  const status = (): BusStatus => ({
    pid: Deno.pid,
    version: VERSION,
    db: config.dbPath,
    sessions: sessions.size,
    started_at: started,
    socket: address.socket,
  });

  const attach = async (conn: Deno.UnixConn, hello: Attach, rest: ReadableStream<Uint8Array>) => {
    const writer = conn.writable.getWriter();
    const refuse = async (error: string, reason: "usage" | "version" | "settings") => {
      await writer.write(lineOf({ ok: false, error, reason } satisfies Welcome)).catch(() => {});
      closeQuietly(conn);
    };
    if (hello.version !== VERSION) {
      return await refuse(
        `this bus is agent-bus ${VERSION}, the entry ${hello.version}`,
        "version",
      );
    }
    if (hello.settings !== options.settings) {
      return await refuse("this bus runs with other AGENT_BUS_* settings", "settings");
    }
    let choice: SessionChoice;
    try {
      choice = options.choose(hello.args, hello.env);
    } catch (error) {
      return await refuse(error instanceof Error ? error.message : String(error), "usage");
    }
    await writer.write(lineOf({ ok: true, bus: status() } satisfies Welcome));
    writer.releaseLock();
    const transport = new StdioTransport({
      stdin: rest,
      stdout: conn.writable,
      maxLineBytes: maxMessageBytes(config),
    });
    // The entry keeps what the session would need on another bus (its names and tokens).
    const tell = (state: SessionState) =>
      void transport.send({ jsonrpc: "2.0", method: STATE_METHOD, params: { ...state } })
        .catch(() => {});
    const logLine = (line: string) =>
      void transport.send({ jsonrpc: "2.0", method: LOG_METHOD, params: { line } })
        .catch(() => {});
    const session = await host.serve(transport, {
      choice,
      place: hello.place,
      restore: hello.restore,
      onChange: tell,
      onLog: logLine,
    });
    // What was wrong with the settings, as a server of its own would have said at start.
    const entryLog = createLogger(config.logLevel, { write: logLine });
    for (const warning of options.configWarnings ?? []) entryLog.warn(warning.message);
    sessions.add(session);
    idleCheck();
    await session.closed;
    sessions.delete(session);
    closeQuietly(conn);
    idleCheck();
  };

  const hook = async (conn: Deno.UnixConn, asked: HookHello) => {
    const reply = async (answer: HookReply) => {
      const writer = conn.writable.getWriter();
      await writer.write(lineOf(answer)).catch(() => {});
      closeQuietly(conn);
    };
    if (asked.version !== VERSION) {
      const error = `this bus is agent-bus ${VERSION}, the hook ${asked.version}`;
      return await reply({ ok: false, error, reason: "version" });
    }
    hooks++;
    idleCheck();
    try {
      const answer = await host.answerHook(asked.ask, asked.ppid);
      await reply({ ok: true, answer: { ...answer, trace: { ...answer.trace, by: "bus" } } });
    } catch (error) {
      await reply({
        ok: false,
        error: String((error as Error)?.message ?? error),
        reason: "failed",
      });
    } finally {
      hooks--;
      idleCheck();
    }
  };

  const serve = async (conn: Deno.UnixConn) => {
    let hello: Hello;
    let rest: ReadableStream<Uint8Array>;
    const timer = setTimeout(() => closeQuietly(conn), HELLO_MS);
    try {
      const first = await firstLine(conn.readable);
      clearTimeout(timer);
      hello = JSON.parse(first.line) as Hello;
      rest = first.rest;
    } catch (error) {
      clearTimeout(timer);
      log.debug("A connection to the resident bus said nothing usable", { error: String(error) });
      closeQuietly(conn);
      return;
    }
    if ("attach" in hello) return await attach(conn, hello.attach, rest);
    if ("hook" in hello) return await hook(conn, hello.hook);
    const writer = conn.writable.getWriter();
    await writer.write(lineOf({ ok: true, bus: status() } satisfies Welcome)).catch(() => {});
    closeQuietly(conn);
    if ("stop" in hello) stop();
  };

  const accepting = (async () => {
    for await (const conn of listener) {
      serve(conn).catch((error) => log.warn("A resident session failed", { error: String(error) }));
    }
  })().catch(() => {});
  const stopListening = onShutdownSignal(stop);
  idleCheck();
  // A bus whose socket is gone (its directory removed) or taken by a newer bus can be reached by
  // no new entry: it ends once its sessions have.
  const orphanCheck = setInterval(async () => {
    const now = await Deno.stat(address.socket).catch(() => undefined);
    if (now?.ino !== ours && sessions.size === 0 && hooks === 0) stop();
  }, ORPHAN_CHECK_MS);
  options.say(`listening ${address.socket}`);
  log.info("agent-bus resident bus ready", { socket: address.socket, db: config.dbPath });

  await stopped;
  clearTimeout(idle);
  clearInterval(orphanCheck);
  stopListening();
  // (Unless a newer bus took its place meanwhile: its socket stays.)
  if ((await Deno.stat(address.socket).catch(() => undefined))?.ino === ours) {
    await Deno.remove(address.socket).catch(() => {});
  }
  listener.close();
  await accepting;
  await Promise.all([...sessions].map((session) => session.stop()));
  await host.close();
}
