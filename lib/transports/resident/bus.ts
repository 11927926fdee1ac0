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
 * It also answers hook runs (`hook_ask.ts`), over the same host, and keeps
 * their record (`../hook/record.ts`); and once asked to (`listen`, from
 * `agent-bus bus start`, or `port` when run) it serves MCP clients by URL
 * on a loopback port, over the same host, to whoever shows the token of
 * `token.ts`. A bus that serves a URL does not idle out; one started in
 * the place of a bus that died while it served one serves it again.
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
import type { Attachment } from "../../bus/unread.ts";
import { createLogger, type Logger } from "../../log.ts";
import { isPostgresUrl } from "../../runtime.ts";
import { onShutdownSignal } from "../../signals.ts";
import { maxMessageBytes } from "../limits.ts";
import type { StdioSession } from "../stdio_session.ts";
import { StdioTransport } from "../stdio_transport.ts";
import { inProcessHost, type SessionChoice, type SessionHost, sessionLog } from "./host.ts";
import { workerHost } from "./worker_host.ts";
import { type ChunkReader, serialWriter } from "../direct_io.ts";
import { recordDir, writeRecord } from "../hook/record.ts";
import type { Serving } from "../http/node.ts";
import { keptPort, portPath, residentToken, tokenPath } from "./token.ts";
import {
  type Attach,
  busLogPath,
  type BusStatus,
  closeQuietly,
  firstLine,
  type Hello,
  type HookHello,
  type HookReply,
  lineOf,
  type Listen,
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
  /** Serve MCP clients by URL on this loopback port from the start (`bus run --port`). */
  port?: number | undefined;
}

/** The bus's URL, and what serves it. */
interface UrlListener {
  url: string;
  port: number;
  server: Deno.HttpServer;
  serving: Serving;
}

/** The only address a bus's URL is served on: this host's users alone reach it. */
const URL_HOSTNAME = "127.0.0.1";

/** Writes to one connection, in the order asked. */
type Write = (bytes: Uint8Array) => Promise<void>;

/** How long an entry has to say who it is. */
const HELLO_MS = 10_000;
/**
 * A bus that has had no session yet waits at least this long before it
 * idles out: its starter attaches once it says it listens, which on a busy
 * machine can take longer than a short idle time.
 */
const FIRST_SESSION_MS = 10_000;
/** How often the bus looks whether its socket is still its own. */
const ORPHAN_CHECK_MS = 5_000;

/**
 * Serve sessions on the socket until idle, stopped or signalled.
 *
 * @returns once the bus has shut down (its socket removed, its database closed)
 */
export async function serveResidentBus(options: ResidentBusOptions): Promise<void> {
  const { config, address } = options;
  // What the bus logs goes to its log file, and while it serves a session to that session's
  // entry too.
  const hostOptions = { ...options, logFile: busLogPath(address.socket) };
  const logs = sessionLog(config.logLevel, hostOptions.logFile);
  const host: SessionHost = isPostgresUrl(config.dbPath)
    ? workerHost(hostOptions, config.resident.workers, logs.log)
    : inProcessHost(hostOptions, logs);
  // A bus already there (of another version: it keeps its sessions and ends when idle) or
  // the socket of one that died gives way.
  await Deno.remove(address.socket).catch(() => {});
  const listener = Deno.listen({ transport: "unix", path: address.socket });
  await Deno.chmod(address.socket, 0o600);
  const ours = (await Deno.stat(address.socket)).ino;
  const bus = new ResidentBus(options, host, logs.log, ours);
  if (options.port !== undefined) {
    try {
      await bus.listen(options.port);
    } catch (error) {
      listener.close();
      await Deno.remove(address.socket).catch(() => {});
      await host.close();
      throw error;
    }
  } else {
    // The URL of a bus that died (not stopped) is served again by the bus in its place.
    const kept = await keptPort(portPath(address.socket));
    if (kept !== undefined) {
      await bus.listen(kept).catch((error) =>
        logs.log.warn("The resident bus does not serve its URL again", { error: String(error) })
      );
    }
  }
  await bus.run(listener);
}

/** A listening bus: its sessions, its hook runs, and when it ends. */
class ResidentBus {
  readonly #options: ResidentBusOptions;
  readonly #host: SessionHost;
  readonly #log: Logger;
  /** The socket's inode: another bus that took the path has another. */
  readonly #ours: number | null;
  readonly #started = new Date().toISOString();
  /** The sessions served, each with its server's pid and since when it is attached. */
  readonly #sessions = new Map<StdioSession, Attachment>();
  /** Hook runs being answered (an on-call stop may wait for minutes). */
  #hooks = 0;
  /** Attaches not yet a session nor refused (a bus must not idle out under them). */
  #arriving = 0;
  #hadSession = false;
  /** Entries of other settings turned away: they serve in processes of their own. */
  readonly #turnedAway: BusStatus["turned_away"] = { count: 0, last_at: null };
  /** Its URL, once asked to serve one (a failed attempt is forgotten). */
  #url: Promise<UrlListener> | undefined;
  #served: UrlListener | undefined;
  readonly #stopped = Promise.withResolvers<void>();
  #idle: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ResidentBusOptions, host: SessionHost, log: Logger, ours: number | null) {
    this.#options = options;
    this.#host = host;
    this.#log = log;
    this.#ours = ours;
  }

  /** Accept connections until the bus ends, then shut down in order. */
  async run(listener: Deno.Listener<Deno.UnixConn>): Promise<void> {
    const { address, config } = this.#options;
    const accepting = (async () => {
      for await (const conn of listener) {
        this.#serve(conn).catch((error) =>
          this.#log.warn("A resident session failed", { error: String(error) })
        );
      }
    })().catch(() => {});
    const stop = () => this.#stopped.resolve();
    const stopListening = onShutdownSignal(stop);
    this.#idleCheck();
    // A bus whose socket is gone (its directory removed) or taken by a newer bus can be reached
    // by no new entry: it ends once its sessions have.
    const orphanCheck = setInterval(async () => {
      if (!this.#busy() && !await this.#ownsSocket()) stop();
    }, ORPHAN_CHECK_MS);
    this.#options.say(`listening ${address.socket}`);
    this.#log.info("agent-bus resident bus ready", { socket: address.socket, db: config.dbPath });

    await this.#stopped.promise;
    clearTimeout(this.#idle);
    clearInterval(orphanCheck);
    stopListening();
    // (Unless a newer bus took its place meanwhile: its socket stays.)
    if (await this.#ownsSocket()) await Deno.remove(address.socket).catch(() => {});
    listener.close();
    await accepting;
    await Promise.all([...this.#sessions.keys()].map((session) => session.stop()));
    const served = await this.#url?.catch(() => undefined);
    if (served) {
      // (Open event streams would hold a graceful shutdown forever: the sessions end first.)
      await served.serving.closeSessions();
      await served.server.shutdown();
      await served.serving.close();
    }
    await this.#host.close();
  }

  /**
   * Serve MCP clients by URL on loopback `port` (0: any free one), from now
   * until the bus ends; asked again, the URL it serves.
   *
   * @throws {Error} when the port is taken, or the bus serves another
   */
  async listen(port: number): Promise<UrlListener> {
    const attempt = this.#url ??= this.#openUrl(port);
    attempt.catch(() => {
      if (this.#url === attempt) this.#url = undefined;
    });
    const served = await attempt;
    if (port !== 0 && served.port !== port) {
      throw new Error(`this bus serves ${served.url}: \`agent-bus bus stop\` it to move it`);
    }
    return served;
  }

  async #openUrl(port: number): Promise<UrlListener> {
    const token = await residentToken(tokenPath(this.#options.address.socket));
    const serving = await this.#host.http({ hostname: URL_HOSTNAME, token });
    try {
      const bound = Promise.withResolvers<Deno.NetAddr>();
      const server = Deno.serve(
        { hostname: URL_HOSTNAME, port, onListen: bound.resolve },
        (request) => serving.handle(request),
      );
      const { port: chosen } = await bound.promise;
      this.#served = { url: `http://${URL_HOSTNAME}:${chosen}/mcp`, port: chosen, server, serving };
      this.#idleCheck();
      await Deno.writeTextFile(portPath(this.#options.address.socket), `${chosen}\n`, {
        mode: 0o600,
      }).catch((error) =>
        this.#log.warn("A bus in this one's place will not serve its URL", { error: String(error) })
      );
      this.#log.info("agent-bus resident bus serves a URL", { url: this.#served.url });
      return this.#served;
    } catch (error) {
      await serving.close();
      if (error instanceof Deno.errors.AddrInUse) {
        throw new Error(
          `port ${port} of ${URL_HOSTNAME} is taken: choose another with --port ` +
            "(or AGENT_BUS_RESIDENT_PORT)",
        );
      }
      throw error;
    }
  }

  #busy(): boolean {
    return this.#sessions.size > 0 || this.#hooks > 0 || this.#arriving > 0 ||
      (this.#served?.serving.sessions ?? 0) > 0;
  }

  async #ownsSocket(): Promise<boolean> {
    const now = await Deno.stat(this.#options.address.socket).catch(() => undefined);
    return now?.ino === this.#ours;
  }

  /** With nothing to serve, end after the idle time (never while it serves a URL). */
  #idleCheck(): void {
    clearTimeout(this.#idle);
    const idleMs = this.#hadSession
      ? this.#options.idleMs
      : Math.max(this.#options.idleMs, FIRST_SESSION_MS);
    this.#idle = this.#busy() || this.#served
      ? undefined
      : setTimeout(() => this.#stopped.resolve(), idleMs);
  }

  #status(): BusStatus {
    const { config, address } = this.#options;
    return {
      pid: Deno.pid,
      version: VERSION,
      db: config.dbPath,
      sessions: this.#sessions.size,
      started_at: this.#started,
      socket: address.socket,
      url: this.#served?.url ?? null,
      http_sessions: this.#served?.serving.sessions ?? 0,
      turned_away: { ...this.#turnedAway },
    };
  }

  /** One connection: its first line says what it wants. */
  async #serve(conn: Deno.UnixConn): Promise<void> {
    let hello: Hello;
    let rest: ChunkReader;
    const timer = setTimeout(() => closeQuietly(conn), HELLO_MS);
    try {
      // (Read and written directly, as the entries do: `direct_io.ts`.)
      const first = await firstLine(conn);
      clearTimeout(timer);
      hello = JSON.parse(first.line) as Hello;
      rest = first.rest;
    } catch (error) {
      clearTimeout(timer);
      this.#log.debug("A connection to the resident bus said nothing usable", {
        error: String(error),
      });
      closeQuietly(conn);
      return;
    }
    const write = serialWriter(conn);
    if ("attach" in hello) return await this.#attach(conn, write, hello.attach, rest);
    if ("hook" in hello) return await this.#hook(conn, write, hello.hook);
    if ("listen" in hello) return await this.#listenFor(conn, write, hello.listen);
    if ("stop" in hello) {
      // (Stopped on purpose: a bus started later serves no URL until asked.)
      await Deno.remove(portPath(this.#options.address.socket)).catch(() => {});
    }
    await write(lineOf({ ok: true, bus: this.#status() } satisfies Welcome)).catch(() => {});
    closeQuietly(conn);
    if ("stop" in hello) this.#stopped.resolve();
  }

  /** `bus start`: serve a URL (of this bus's version and settings), and say where. */
  async #listenFor(conn: Deno.UnixConn, write: Write, asked: Listen): Promise<void> {
    const answer: Welcome = this.#mismatch(asked, "the command") ??
      await this.listen(asked.port).then(
        () => ({ ok: true, bus: this.#status() }),
        (error) => ({ ok: false, error: String(error?.message ?? error), reason: "listen" }),
      );
    await write(lineOf(answer)).catch(() => {});
    closeQuietly(conn);
  }

  /** Why this bus does not serve `asked` (another version or settings), if it does not. */
  #mismatch(
    asked: { version: string; settings: string },
    who: string,
  ): Welcome & { ok: false } | undefined {
    if (asked.version !== VERSION) {
      const error = `this bus is agent-bus ${VERSION}, ${who} ${asked.version}`;
      return { ok: false, error, reason: "version" };
    }
    if (asked.settings !== this.#options.settings) {
      return {
        ok: false,
        error: "this bus runs with other AGENT_BUS_* settings",
        reason: "settings",
      };
    }
    return undefined;
  }

  /** An entry's session: refused (and why), or served until it ends. */
  async #attach(conn: Deno.UnixConn, write: Write, hello: Attach, rest: ChunkReader) {
    // (Until it is a session or refused, it keeps the bus from idling out; a status does not.)
    this.#arriving++;
    this.#idleCheck();
    let arrived = false;
    const arrive = () => {
      if (arrived) return;
      arrived = true;
      this.#arriving--;
      this.#idleCheck();
    };
    try {
      await this.#admit(conn, write, hello, rest, arrive);
    } finally {
      arrive();
    }
  }

  async #admit(
    conn: Deno.UnixConn,
    write: Write,
    hello: Attach,
    rest: ChunkReader,
    arrive: () => void,
  ): Promise<void> {
    const refuse = async (error: string, reason: "usage" | "version" | "settings" | "listen") => {
      await write(lineOf({ ok: false, error, reason } satisfies Welcome)).catch(() => {});
      closeQuietly(conn);
    };
    const mismatch = this.#mismatch(hello, "the entry");
    if (mismatch?.reason === "settings") {
      this.#turnedAway.count++;
      this.#turnedAway.last_at = new Date().toISOString();
    }
    if (mismatch) return await refuse(mismatch.error, mismatch.reason);
    let choice: SessionChoice;
    try {
      choice = this.#options.choose(hello.args, hello.env);
    } catch (error) {
      return await refuse(error instanceof Error ? error.message : String(error), "usage");
    }
    await write(lineOf({ ok: true, bus: this.#status() } satisfies Welcome));
    await this.#session(conn, write, hello, choice, rest, arrive);
  }

  async #session(
    conn: Deno.UnixConn,
    write: Write,
    hello: Attach,
    choice: SessionChoice,
    rest: ChunkReader,
    arrive: () => void,
  ): Promise<void> {
    const { config } = this.#options;
    const transport = new StdioTransport({
      stdin: rest,
      stdout: write,
      maxLineBytes: maxMessageBytes(config),
    });
    const notify = (method: string, params: Record<string, unknown>) =>
      void transport.send({ jsonrpc: "2.0", method, params }).catch(() => {});
    // The entry keeps what the session would need on another bus (its names and tokens), and
    // writes the bus's log lines of the session where a server of its own would have.
    const logLine = (line: string) => notify(LOG_METHOD, { line });
    // (Before its session is recorded: a record of this pid made since is this session's.)
    const attachment = { pid: hello.place.pid, since: Date.now() / 1000 };
    const session = await this.#host.serve(transport, {
      choice,
      place: hello.place,
      restore: hello.restore,
      onChange: (state: SessionState) => notify(STATE_METHOD, { ...state }),
      onLog: logLine,
    });
    // What was wrong with the settings, as a server of its own would have said at start.
    const entryLog = createLogger(config.logLevel, { write: logLine });
    for (const warning of this.#options.configWarnings ?? []) entryLog.warn(warning.message);
    this.#sessions.set(session, attachment);
    this.#hadSession = true;
    arrive();
    await session.closed;
    this.#sessions.delete(session);
    closeQuietly(conn);
    this.#idleCheck();
  }

  /** A hook run, answered over the bus's host (never a session: the bus stays while it waits). */
  async #hook(conn: Deno.UnixConn, write: Write, asked: HookHello): Promise<void> {
    const reply = async (answer: HookReply) => {
      await write(lineOf(answer)).catch(() => {});
      closeQuietly(conn);
    };
    if (asked.version !== VERSION) {
      const error = `this bus is agent-bus ${VERSION}, the hook ${asked.version}`;
      return await reply({ ok: false, error, reason: "version" });
    }
    if (asked.db !== this.#options.config.dbPath) {
      const error = "this bus serves another database in the same directory";
      return await reply({ ok: false, error, reason: "database" });
    }
    this.#hooks++;
    this.#idleCheck();
    try {
      const attached = [...this.#sessions.values()];
      const answer = await this.#host.answerHook(asked.ask, { ppid: asked.ppid, attached });
      const trace = { ...answer.trace, by: "bus" as const };
      // The record is written before the reply: once the hook has exited, it is there.
      const { config } = this.#options;
      writeRecord(recordDir(config.dbPath, config.resident.home), trace, false, asked.pid);
      await reply({ ok: true, answer: { ...answer, trace } });
    } catch (error) {
      await reply({
        ok: false,
        error: String((error as Error)?.message ?? error),
        reason: "failed",
      });
    } finally {
      this.#hooks--;
      this.#idleCheck();
    }
  }
}
