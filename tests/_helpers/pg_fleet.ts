/**
 * A bus across hosts for tests and benchmarks: PostgreSQL on a database host
 * of a {@linkcode Fleet} (network namespaces, `netns.ts`), agent-bus servers
 * on the client hosts reaching it by IP only, and a proxy on a host's path
 * to the database that can stall without closing anything
 * (`stall_proxy.ts`). Needs root, `ip netns` and Debian's PostgreSQL.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { type Fleet, startFleet } from "./netns.ts";
import { type Peer, startPeer } from "./peer.ts";
import { spawnSteered } from "./steered.ts";
import { type Postgres, startPostgres } from "./postgres.ts";

const STALL_PROXY = fileURLToPath(new URL("./stall_proxy.ts", import.meta.url));

/** A fleet and PostgreSQL on its database host. */
export type PostgresFleet = { fleet: Fleet; pg: Postgres };

/** A fleet of `hosts` client hosts and PostgreSQL on its own host, listening on each link. */
export async function fleetWithPostgres(
  hosts: number,
): Promise<PostgresFleet & AsyncDisposable> {
  const fleet = await startFleet(hosts);
  try {
    const pg = await startPostgres({
      netns: { exec: fleet.db.exec, listen: fleet.hosts.map((h) => h.dbIp) },
    });
    return {
      fleet,
      pg,
      async [Symbol.asyncDispose]() {
        await pg[Symbol.asyncDispose]();
        await fleet[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await fleet[Symbol.asyncDispose]();
    throw error;
  }
}

/** The database URL as host `i` (0-based) reaches it. */
export function urlOn(setup: PostgresFleet, i: number): string {
  return setup.pg.url.replace(/@[^:/]+:/, `@${setup.fleet.hosts[i]!.dbIp}:`);
}

/** An agent-bus stdio server on host `i`. */
export async function peerOn(
  setup: PostgresFleet,
  i: number,
): Promise<Peer> {
  return await startPeer({ dbPath: urlOn(setup, i), prefix: setup.fleet.hosts[i]!.exec });
}

/** A {@linkcode STALL_PROXY} on host `i`, forwarding a loopback port of that host to the database. */
export async function stallProxyOn(setup: PostgresFleet, i: number): Promise<StallProxy> {
  return await startStallProxy(urlOn(setup, i), setup.fleet.hosts[i]!.exec);
}

/** A running {@linkcode STALL_PROXY}. */
export interface StallProxy extends AsyncDisposable {
  /** The database's URL through the proxy. */
  url: string;
  /** Stop forwarding, leaving every connection open. */
  stall(): Promise<void>;
  /** Forward again. */
  resume(): Promise<void>;
}

/**
 * Start a {@linkcode STALL_PROXY} in front of the PostgreSQL server of `url`,
 * on a free loopback port, run with `prefix` (`ip netns exec …`: on a host).
 */
export async function startStallProxy(url: string, prefix: string[] = []): Promise<StallProxy> {
  const target = new URL(url);
  const [command, ...args] = [
    ...prefix,
    Deno.execPath(),
    "run",
    "--allow-net",
    STALL_PROXY,
    "0",
    target.hostname,
    target.port,
  ];
  const proxy = spawnSteered([command!, ...args]);
  const say = async (command: string, answer: string) => {
    await proxy.say(command);
    assert.equal(await proxy.next(), answer);
  };
  const listening = /^listening (\d+)$/.exec(await proxy.next());
  assert.ok(listening, "the stall proxy started");
  const through = new URL(target);
  through.hostname = "127.0.0.1";
  through.port = listening[1]!;
  return {
    url: through.href,
    stall: () => say("stall", "stalled"),
    resume: () => say("resume", "resumed"),
    [Symbol.asyncDispose]: () => proxy.close({ kill: true }),
  };
}

/** `call`'s result, asserting it came within `limitMs` (`what` names it in the failure). */
export async function answeredWithin<T>(
  limitMs: number,
  what: string,
  call: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const result = await call();
  const took = performance.now() - started;
  assert.ok(took < limitMs, `${what} answered after ${took.toFixed(0)} ms`);
  return result;
}

/**
 * After a stall: a call that was caught in it either went through or said
 * `DB_UNAVAILABLE`; then `send` (the same send, same `client_message_id`) is
 * tried until it goes through, within 30 s. Returns the stored seq.
 */
export async function retriedAfterStall(
  caught: CallToolResult,
  send: () => Promise<CallToolResult>,
): Promise<number> {
  if (caught.isError) {
    const error = (caught.structuredContent as { error: { code: string } }).error;
    assert.equal(error.code, "DB_UNAVAILABLE");
  }
  let sent = await send();
  for (const resumed = performance.now(); sent.isError;) {
    assert.ok(performance.now() - resumed < 30_000, "usable again within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
    sent = await send();
  }
  return (sent.structuredContent as { sent: { message: { seq: number } }[] }).sent[0]!.message
    .seq;
}
