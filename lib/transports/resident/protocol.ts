/**
 * What an entry and the resident bus say on a connection before MCP flows:
 * one JSON line each way. The entry says who it is (`attach`: the serve
 * arguments, the settings that choose its profile and name, where its
 * client runs), or asks for the bus's `status`, or tells it to `stop`; the
 * bus answers with itself or with what was wrong. After an accepted
 * `attach`, the connection carries the session's MCP messages, one per
 * line, exactly as stdio would.
 *
 * Also where a bus listens: a socket in the database's directory (created
 * 0700 by the store, so only its owner reaches it), `agent-bus.sock` for
 * the default database and a name made from the file's name for another
 * (one bus per database, however many share the directory; names an
 * entry's permissions can say), or for a database URL a name made from it
 * in the user's `~/.agent_bus` (`launch.ts`). A bus serves entries of its own
 * version and settings (every `AGENT_BUS_*` setting that is not a
 * session's own, nor the database, which the socket already names): an
 * entry of another version starts a bus of its own in its place (the old
 * one keeps its sessions and ends when idle), and one of other settings
 * serves in its own process.
 *
 * @module
 */

import { counted, directoryOf, fnv1a64 } from "../../strings.ts";
import type { ProcessPlace } from "../../bus/place.ts";
import type { SessionState } from "../../bus/session.ts";
import type { HookAnswer, HookAsk } from "../hook/answer.ts";
import type { ResolvedConfig } from "../../config.ts";
import { residenceDir, residentSocket } from "../../launch.ts";
import { concat } from "../frame_reader.ts";
import { type ByteSource, type ChunkReader, chunkReader, writeAll } from "../direct_io.ts";
import { PACKAGE_VERSION } from "../../version.ts";

/** The first line from an entry (or from a hook, `hook`, answered with a {@linkcode HookReply}). */
export type Hello =
  | { attach: Attach }
  | { hook: HookHello }
  | { status: true }
  | { stop: true }
  | { listen: Listen };

/**
 * Serve MCP clients by URL too, on a loopback port (`agent-bus bus start`).
 * As for an attach, the bus must be of this version and settings.
 */
export interface Listen {
  version: string;
  settings: string;
  /** The port; 0 takes any free one. */
  port: number;
}

/**
 * A hook run asked of the bus. The version and the database must match
 * (two SQLite files in one directory share its socket): what a hook is told
 * depends on the database alone, whatever the other settings of the bus.
 */
export interface HookHello {
  version: string;
  /** The hook's database (`AGENT_BUS_DB` or `--db`, resolved). */
  db: string;
  ask: HookAsk;
  /** The hook's parent (its client, or the shell the client ran it in). */
  ppid: number;
  /** The hook's own process (its record names it). */
  pid: number;
}

/** The bus's answer to a {@linkcode HookHello}: the hook's answer, or why there is none. */
export type HookReply =
  | { ok: true; answer: HookAnswer }
  | { ok: false; error: string; reason: "version" | "database" | "failed" };

/** Who a session is, as its entry tells the bus. */
export interface Attach {
  /** The entry's version: a bus of another answers with an error. */
  version: string;
  /** The entry's settings ({@linkcode settingsKey}): a bus of others answers with an error. */
  settings: string;
  /** The serve arguments (`--profile`, `--agent`, …). */
  args: string[];
  /** The settings a session chooses by (`AGENT_BUS_AGENT`, `MCP_ROLE`). */
  env: Record<string, string>;
  /** Where the session's client runs: the entry and its parent. */
  place: ProcessPlace;
  /** The session to carry on, when its bus died (what the bus last said of it). */
  restore?: SessionState | undefined;
}

/**
 * The notification in which a bus tells the entry its session's state
 * (never forwarded to the client), written by the bus exactly so: the
 * entry knows it by this start.
 */
export const STATE_METHOD = "agent-bus/session-state";
export const STATE_LINE_START = `{"jsonrpc":"2.0","method":"${STATE_METHOD}"`;

/**
 * The notification that carries one of the bus's log lines written while
 * it served the session (`params.line`): the entry writes it to its stderr,
 * where a server of its own would have written it (a client's MCP log).
 */
export const LOG_METHOD = "agent-bus/log";
export const LOG_LINE_START = `{"jsonrpc":"2.0","method":"${LOG_METHOD}"`;

/** The bus's answer. */
export type Welcome =
  | { ok: true; bus: BusStatus }
  | { ok: false; error: string; reason: "usage" | "version" | "settings" | "listen" };

/** What `agent-bus bus status` shows. */
export interface BusStatus {
  pid: number;
  version: string;
  db: string;
  sessions: number;
  /** When the bus started (ISO 8601). */
  started_at: string;
  socket: string;
  /** Where MCP clients attach by URL (`bus start`), or null when it serves none. */
  url: string | null;
  /** MCP sessions open at that URL. */
  http_sessions: number;
  /**
   * Entries of other `AGENT_BUS_*` settings it turned away (each then
   * served its agent in a process of its own), and when it last did.
   */
  turned_away: { count: number; last_at: string | null };
}

/**
 * What the bus says of the entries of other settings it turned away, or
 * undefined when there were none (`bus status`, `doctor`).
 */
export function turnedAwayText(bus: BusStatus): string | undefined {
  const { count, last_at } = bus.turned_away;
  if (count === 0) return undefined;
  return `turned away ${counted(count, "entry", "entries")} of other AGENT_BUS_* settings, ` +
    `the last at ${last_at} (each serves its agent in a process of its own)`;
}

/** Settings read per session, passed in the attach (not part of the bus's identity). */
export const SESSION_SETTINGS = ["AGENT_BUS_AGENT", "MCP_ROLE"];
/**
 * Settings about whether to attach at all, and where: the database, whose
 * bus the socket an entry reaches already is, however the path was spelled
 * (unset for the default one, relative, or as the bus that an entry starts
 * is given it: absolute).
 */
const ATTACH_SETTINGS = [
  "AGENT_BUS_DB",
  "AGENT_BUS_RESIDENT",
  "AGENT_BUS_STANDALONE",
  "AGENT_BUS_RESIDENT_IDLE_MS",
  "AGENT_BUS_RESIDENT_PORT",
];
/** Longest first line either side accepts. */
export const MAX_HELLO_BYTES = 256 * 1024;
/**
 * The bus's own log, beside its socket (`<socket name>.log`): every line it
 * logs at `AGENT_BUS_LOG_LEVEL` (warn by default), with its time, whatever
 * session it concerns; a bus an entry started has no terminal to say it in.
 */
export function busLogPath(socket: string): string {
  return `${socket.replace(/\.sock$/, "")}.log`;
}

/** Most bytes the bus's log keeps (and as many before, in `.log.1`). */
export const MAX_BUS_LOG_BYTES = 1024 * 1024;

/** Unix socket paths are limited to about 108 bytes. */
const MAX_SOCKET_PATH = 100;

/** Where the resident bus of a database listens, and the lock its starters take. */
export interface ResidentAddress {
  socket: string;
  lock: string;
}

/**
 * The address of the resident bus for `config`, or a reason there is none
 * (an in-memory database is each process's own). A SQLite file's bus
 * listens beside it; a database URL's (PostgreSQL) in the user's
 * `~/.agent_bus`, one per host and URL.
 */
export function residentAddress(config: ResolvedConfig): ResidentAddress | { none: string } {
  const db = config.dbPath;
  if (db === ":memory:") return { none: "an in-memory database is each process's own" };
  const home = config.resident.home;
  if (db.includes("://") && !home) return { none: "HOME is not set, so it has no directory" };
  const dir = db.includes("://") ? residenceDir(home!) : directoryOf(db);
  const socket = residentSocket(dir, db);
  if (socket.length > MAX_SOCKET_PATH) {
    return { none: `the socket path would be too long (${socket.length} bytes): ${socket}` };
  }
  // One lock per directory, whatever the database: starting a bus takes a moment, and the
  // directory of URLs' buses would otherwise keep a lock file for every URL ever used.
  return { socket, lock: `${dir}/agent-bus.lock` };
}

/**
 * What makes two buses of one database differ: every setting that is not a
 * session's own, nor about attaching (the database included).
 */
export function settingsKey(env: Record<string, string | undefined>): string {
  const settings = Object.keys(env)
    .filter((key) =>
      key.startsWith("AGENT_BUS_") && !SESSION_SETTINGS.includes(key) &&
      !ATTACH_SETTINGS.includes(key)
    )
    .sort()
    .map((key) => `${key}=${env[key]}`);
  return fnv1a64(settings.join("\n"));
}

/**
 * Read the first line of `source` (at most {@linkcode MAX_HELLO_BYTES}),
 * directly (`direct_io.ts`), and return it with a reader of everything
 * after it.
 *
 * @throws {Error} when the source ends first or the line is too long
 */
export async function firstLine(
  source: ByteSource,
): Promise<{ line: string; rest: ChunkReader }> {
  const reader = chunkReader(source);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the connection closed before its first line");
    const newline = value.indexOf(10);
    if (newline < 0) {
      chunks.push(value);
      size += value.length;
      if (size > MAX_HELLO_BYTES) throw new Error("the first line is too long");
      continue;
    }
    chunks.push(value.subarray(0, newline));
    const line = new TextDecoder().decode(concat(chunks));
    return { line, rest: chunkReader(source, value.subarray(newline + 1)) };
  }
}

/**
 * Say `message` on `conn` and read the bus's one-line answer, for a
 * connection that says nothing more (a hook run, a status, a stop).
 *
 * @throws {Error} when the connection ends before a whole line, or the line is too long
 */
export async function exchange<Answer = Welcome>(
  conn: Deno.UnixConn,
  message: Hello,
): Promise<Answer> {
  return (await hello<Answer>(conn, message)).answer;
}

/**
 * Say `message` on `conn` and read the bus's answer, with a reader of what
 * follows it (a session). The connection is read and written directly
 * (`direct_io.ts`): entries and hooks are processes that have just started.
 */
export async function hello<Answer = Welcome>(
  conn: Deno.UnixConn,
  message: Hello,
): Promise<{ answer: Answer; rest: ChunkReader }> {
  await writeAll(conn, lineOf(message));
  const { line, rest } = await firstLine(conn);
  return { answer: JSON.parse(line) as Answer, rest };
}

/**
 * A connection to the bus at `socket`, or undefined when none listens there
 * (or the one there dies as it is reached).
 */
export async function connect(socket: string): Promise<Deno.UnixConn | undefined> {
  try {
    return await Deno.connect({ transport: "unix", path: socket });
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound || error instanceof Deno.errors.ConnectionRefused ||
      error instanceof Deno.errors.ConnectionReset
    ) {
      return undefined;
    }
    throw error;
  }
}

/**
 * What the bus at `socket` says of itself, or undefined when none runs
 * there (or it ends as it is asked).
 */
export async function statusAt(socket: string): Promise<Welcome | undefined> {
  const conn = await connect(socket).catch(() => undefined);
  if (!conn) return undefined;
  try {
    return await exchange(conn, { status: true });
  } catch {
    return undefined;
  } finally {
    closeQuietly(conn);
  }
}

/** Close `conn`, which its peer's end (or the end of its stream) may have closed already. */
export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // closed already
  }
}

/** One JSON line. */
export function lineOf(value: unknown): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(value)}\n`);
}

/** The version an entry of this build attaches with. */
export const VERSION = PACKAGE_VERSION;
