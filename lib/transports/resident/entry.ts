/**
 * `attachToResidentBus()`: what an MCP client's entry does in resident
 * mode. It connects to the resident bus of its database
 * (`protocol.ts` says where), starting one when none runs, says who its
 * session is, and relays its stdio to the bus and back until either side
 * ends. It loads only this relay: the bus holds the program.
 *
 * When many entries start at once exactly one bus starts: each takes the
 * bus's lock file before starting it, and looks again for a running bus
 * once it holds the lock. The bus is started with this program's own
 * launch (`lib/launch.ts`), detached from the entry's stdio; the entry waits
 * for it to say it is listening.
 *
 * @module
 */

import { directoryOf } from "../../strings.ts";
import { processPlace } from "../../bus/place.ts";
import type { ResolvedConfig } from "../../config.ts";
import { launchFor } from "../../launch.ts";
import type { SessionState } from "../../bus/session.ts";
import { maxMessageBytes } from "../limits.ts";
import { onShutdownSignal } from "../../signals.ts";
import { type ChunkReader, chunkReader, directWriter, serialWriter } from "../direct_io.ts";
import { type BusLink, relay } from "./relay.ts";
import {
  type Attach,
  closeQuietly,
  connect,
  exchange,
  hello,
  type ResidentAddress,
  SESSION_SETTINGS,
  settingsKey,
  VERSION,
} from "./protocol.ts";

/** How long a starting bus may take to listen (a busy machine has needed seconds). */
const START_MS = 60_000;

/**
 * What became of an attach: the session ran (its exit code, and what was
 * wrong with its arguments), or it could not be served here (why: the
 * caller serves on its own).
 */
export type Attached =
  | { code: number; error?: string }
  | { failed: string };

/**
 * Relay this process's stdio to the resident bus at `address`, starting it
 * if needed.
 *
 * @returns the exit code once the session ended, or why it could not
 *   attach (the caller then serves on its own)
 */
export async function attachToResidentBus(
  args: string[],
  env: Record<string, string | undefined>,
  config: ResolvedConfig,
  address: ResidentAddress,
): Promise<Attached> {
  const sessionEnv: Record<string, string> = {};
  for (const key of SESSION_SETTINGS) if (env[key] !== undefined) sessionEnv[key] = env[key]!;
  const attach: Attach = {
    version: VERSION,
    settings: settingsKey(env),
    args,
    env: sessionEnv,
    place: processPlace(),
  };
  let welcome;
  try {
    welcome = await attachTo(await connect(address.socket), attach);
    // None answered (or one of another version, which gives way): start this version's.
    if (!welcome || (!welcome.answer.ok && welcome.answer.reason === "version")) {
      welcome = await attachTo(await reachBus(config, env, address), attach);
    }
  } catch (error) {
    return { failed: error instanceof Error ? error.message : String(error) };
  }
  if (!welcome) return { failed: "the resident bus closed the connection" };
  const { answer, rest, conn } = welcome;
  if (!answer.ok) {
    if (answer.reason === "usage") return { code: 2, error: answer.error };
    return { failed: answer.error };
  }
  // If the bus dies, the session goes on on a new one (started if none runs), as the same agent.
  const reconnect = async (restore: SessionState | undefined) => {
    const again = { ...attach, restore };
    const conn = await connect(address.socket) ??
      await reachBus(config, env, address);
    const { answer, rest } = await hello(conn, { attach: again });
    if (!answer.ok) throw new Error(answer.error);
    return linkOf(conn, rest);
  };
  // A shutdown signal ends the session as a server of its own would: cleanly, then exit 0.
  const { promise: stop, resolve: stopped } = Promise.withResolvers<void>();
  const stopListening = onShutdownSignal(stopped);
  try {
    // (Stdio and the socket are read and written directly: see `direct_io.ts`.)
    await relay(linkOf(conn, rest), reconnect, {
      stdin: chunkReader(Deno.stdin),
      stdout: directWriter(Deno.stdout),
      maxBytes: maxMessageBytes(config),
      stderr: serialWriter(Deno.stderr),
    }, stop);
  } finally {
    stopListening();
  }
  return { code: 0 };
}

/** The relay's link to the bus on `conn`, whose welcome `rest` follows. */
function linkOf(conn: Deno.UnixConn, rest: ChunkReader): BusLink {
  return {
    write: serialWriter(conn),
    end() {
      try {
        conn.closeWrite();
      } catch {
        closeQuietly(conn); // (gone already)
      }
    },
    reader: rest,
  };
}

/** Attach on `conn`; undefined when there is none, or its bus died as it answered. */
async function attachTo(conn: Deno.UnixConn | undefined, attach: Attach) {
  if (!conn) return undefined;
  try {
    return { ...await hello(conn, { attach }), conn };
  } catch {
    closeQuietly(conn);
    return undefined;
  }
}

/**
 * A connection to the bus of this version at `address`: started under its
 * lock, unless another starter's answers once the lock is held. (Also how
 * `agent-bus bus start` reaches the bus.)
 *
 * @throws {Error} when the bus it started does not listen in time
 */
export async function reachBus(
  config: ResolvedConfig,
  env: Record<string, string | undefined>,
  address: ResidentAddress,
): Promise<Deno.UnixConn> {
  await Deno.mkdir(directoryOf(address.lock), { recursive: true, mode: 0o700 });
  using lock = await Deno.open(address.lock, { create: true, write: true, mode: 0o600 });
  await lock.lock(true);
  const running = await connect(address.socket);
  if (running) {
    const status = await exchange(running, { status: true }).catch(() => undefined);
    closeQuietly(running);
    if (status?.ok && status.bus.version === VERSION) {
      const conn = await connect(address.socket);
      if (conn) return conn;
    }
  }
  const launch = launchFor({
    execPath: Deno.execPath(),
    dbPath: config.dbPath,
    args: ["bus", "run"],
    env,
    denoDir: env.DENO_DIR,
    role: "bus",
  });
  // (With the settings it was given, which a caller in process may hold apart from its own.)
  const settings = Object.entries(env).filter(([key, value]) =>
    key.startsWith("AGENT_BUS_") && value !== undefined
  );
  const child = new Deno.Command(launch.command, {
    args: launch.args,
    env: { ...Object.fromEntries(settings) as Record<string, string>, ...launch.env },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  child.unref();
  if (!await listening(child, START_MS)) {
    throw new Error(`the resident bus did not start within ${START_MS / 1000} s`);
  }
  const conn = await connect(address.socket);
  if (!conn) throw new Error("the resident bus said it listens, yet refused the connection");
  return conn;
}

/** Whether `child` says `listening` on stdout within `ms`. */
async function listening(child: Deno.ChildProcess, ms: number): Promise<boolean> {
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const said = (async () => {
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) return false;
      text += value;
    }
    return text.startsWith("listening");
  })();
  try {
    return await Promise.race([said, late]);
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
}
