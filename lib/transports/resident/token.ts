/**
 * What a resident bus's URL (`agent-bus bus start`) keeps beside its socket.
 *
 * The bearer token: what an MCP client that attaches by URL sends, so that
 * only the user who owns the bus can attach to it over loopback, where any
 * local user can connect. It is kept in `agent-bus.token` in the bus's
 * directory, mode 0600, made once by whoever needs it first (`install
 * --url` writes it into the clients' configs, the bus checks it) and the
 * same ever after, so that installed clients keep working across restarts
 * of the bus.
 *
 * The port it serves, beside the socket (`<socket name>.port`): written
 * when a bus starts serving the URL and removed by `bus stop`, so that a
 * bus started in the place of one that died (by an entry) serves the URL
 * again.
 *
 * @module
 */

import { directoryOf } from "../../strings.ts";

/** The token file of the bus whose socket is `socket`. */
export function tokenPath(socket: string): string {
  return `${directoryOf(socket)}/agent-bus.token`;
}

/**
 * The token in `path`, made (random, 256 bits) when there is none. Two
 * makers at once agree, and no reader sees half a file: the token is
 * written whole to a file of this process's, then linked to `path`, which
 * fails when another maker's is there already (that one is read instead).
 *
 * @throws {Error} when the file exists but holds no token
 */
export async function residentToken(path: string): Promise<string> {
  const kept = await readToken(path);
  if (kept !== undefined) return kept;
  const made = Array.from(crypto.getRandomValues(new Uint8Array(32)))
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  await Deno.mkdir(directoryOf(path), { recursive: true, mode: 0o700 });
  const draft = `${path}.${Deno.pid}.${made.slice(0, 8)}`;
  await Deno.writeTextFile(draft, `${made}\n`, { createNew: true, mode: 0o600 });
  try {
    await Deno.link(draft, path);
    return made;
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  } finally {
    await Deno.remove(draft);
  }
  return (await readToken(path))!;
}

/**
 * The token in `path`, or undefined when there is no such file.
 *
 * @throws {Error} when the file exists but holds no token
 */
export async function readToken(path: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const token = text.trim();
  if (token.length < 32) throw new Error(`${path} holds no token: remove it to make a new one`);
  return token;
}

/** The file that keeps the port of the bus whose socket is `socket`. */
export function portPath(socket: string): string {
  return `${socket.replace(/\.sock$/, "")}.port`;
}

/** The port kept in `path`, or undefined when none is (or it holds no port). */
export async function keptPort(path: string): Promise<number | undefined> {
  const text = await Deno.readTextFile(path).catch(() => undefined);
  const port = Number(text?.trim());
  return text !== undefined && Number.isInteger(port) && port > 0 && port <= 65535
    ? port
    : undefined;
}
