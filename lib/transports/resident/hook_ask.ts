/**
 * `askResidentBus()`: a hook run answered by the resident bus of its
 * database, when one runs. The bus holds the database open and hears every
 * commit of its sessions in process, so the hook's process loads only this
 * (no store, no bus) and an on-call wait wakes as a `sync` does. Where no
 * bus runs, or it is of another version, or it goes away before it
 * answers, the caller answers over the database itself; a hook never
 * starts a bus.
 *
 * @module
 */

import type { ResolvedConfig } from "../../config.ts";
import type { HookAnswer, HookAsk } from "../hook/answer.ts";
import {
  closeQuietly,
  connect,
  exchange,
  type HookReply,
  residentAddress,
  VERSION,
} from "./protocol.ts";

/**
 * Ask the resident bus of `config`'s database to answer `ask` for a hook
 * whose parent is `ppid`.
 *
 * @returns the bus's answer, or why there is none (the caller answers itself)
 */
export async function askResidentBus(
  config: ResolvedConfig,
  ask: HookAsk,
  ppid: number,
): Promise<{ answer: HookAnswer } | { failed: string }> {
  const address = residentAddress(config);
  if ("none" in address) return { failed: address.none };
  let conn;
  try {
    conn = await connect(address.socket);
  } catch (error) {
    return { failed: `the resident bus could not be reached: ${(error as Error).message}` };
  }
  if (!conn) return { failed: "no resident bus runs" };
  try {
    const reply = await exchange<HookReply>(conn, {
      hook: { version: VERSION, db: config.dbPath, ask, ppid, pid: Deno.pid },
    });
    return reply.ok ? { answer: reply.answer } : { failed: reply.error };
  } catch (error) {
    return { failed: `the resident bus went away: ${(error as Error).message}` };
  } finally {
    closeQuietly(conn);
  }
}
