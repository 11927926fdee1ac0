/**
 * What agent-bus sends PostgreSQL, read message by message through a
 * recording proxy (`wire_recorder.ts`, a process of its own), for tests of
 * how it talks to the server: e.g. whether the server is ever left waiting
 * for a client while that client's transaction holds a lock.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { spawnSteered } from "./steered.ts";
import type { FrontendMessage } from "./wire_recorder.ts";

export type { FrontendMessage };

const RECORDER = fileURLToPath(new URL("./wire_recorder.ts", import.meta.url));

/** A running recorder. */
export interface WireRecorder extends AsyncDisposable {
  /** The database's URL through the proxy. */
  url: string;
  /** Every message clients sent so far, in the order each connection sent them. */
  messages(): Promise<FrontendMessage[]>;
}

/**
 * Start a recorder in front of the server of `url`, on a free loopback port,
 * as a process of its own (a store on PostgreSQL blocks its thread while the
 * server answers: a proxy in the same thread would never forward).
 */
export async function startWireRecorder(url: string): Promise<WireRecorder> {
  const target = new URL(url);
  const child = spawnSteered([
    Deno.execPath(),
    "run",
    "--allow-net",
    RECORDER,
    target.hostname,
    target.port || "5432",
  ]);
  const listening = /^listening (\d+)$/.exec(await child.next());
  if (!listening) throw new Error("the wire recorder did not start");
  const through = new URL(url);
  through.hostname = "127.0.0.1";
  through.port = listening[1]!;
  return {
    url: through.href,
    async messages() {
      await child.say("dump");
      return JSON.parse(await child.next()) as FrontendMessage[];
    },
    [Symbol.asyncDispose]: () => child.close({ kill: true }),
  };
}

/**
 * The statements after which a client left the server waiting for it
 * (`Flush`: the client waits for an answer before it sends the rest of a
 * statement) while its transaction held an advisory lock, by connection:
 * an empty list when it never did. (Read from the client's side: a
 * transaction that failed on the server lost its locks earlier than this
 * sees, so a test's workload should not fail.)
 */
export function flushesUnderLock(messages: readonly FrontendMessage[]): string[] {
  const found: string[] = [];
  const byConnection = new Map<
    number,
    { texts: Map<string, string>; bound: string; parsed: string; locked: boolean }
  >();
  for (const message of messages) {
    let state = byConnection.get(message.connection);
    if (!state) {
      state = { texts: new Map(), bound: "", parsed: "", locked: false };
      byConnection.set(message.connection, state);
    }
    const executed = (text: string) => {
      if (/pg_advisory_xact_lock/.test(text)) state.locked = true;
      if (/^\s*(COMMIT|ROLLBACK)\b/i.test(text)) state.locked = false;
    };
    if (message.type === "P") {
      state.texts.set(message.name!, message.text!);
      state.parsed = message.text!;
    } else if (message.type === "B") {
      state.bound = state.texts.get(message.name!) ?? "";
    } else if (message.type === "E") {
      executed(state.bound);
    } else if (message.type === "Q") {
      executed(message.text!);
    } else if (message.type === "H" && state.locked) {
      found.push(state.parsed);
    }
  }
  return found;
}
