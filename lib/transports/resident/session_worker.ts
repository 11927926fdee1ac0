/**
 * A session worker of a resident bus on PostgreSQL (see `worker_host.ts`):
 * one runtime, opened at start, shared by every session the bus hands it,
 * each served exactly as the bus serves one in its own thread
 * (`host.ts`), with its messages, state and log lines passed to and from
 * the bus's thread. It answers hook runs over the same runtime.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import type { ConfigWarning, ResolvedConfig } from "../../config.ts";
import type { ProcessPlace } from "../../bus/place.ts";
import type { SessionState } from "../../bus/session.ts";
import type { JSONRPCMessage } from "../../mcp/_sdk.ts";
import { profileNamed } from "../../mcp/profiles/mod.ts";
import type { HookAnswer, HookAsk } from "../hook/answer.ts";
import type { StdioSession } from "../stdio_session.ts";
import { WorkerSideTransport } from "../worker_port.ts";
import {
  type HookOrigin,
  inProcessHost,
  type SessionChoice,
  type SessionHost,
  type SessionLog,
  sessionLog,
} from "./host.ts";

/** What the bus tells a session worker. */
export type ToSessionWorker =
  | {
    kind: "start";
    config: ResolvedConfig;
    logFile: string;
    configWarnings: ConfigWarning[];
    indexing: boolean;
  }
  | {
    kind: "open";
    sid: number;
    /** The profile by its name (a built-in one). */
    choice: Omit<SessionChoice, "profile"> & { profile: string };
    place: ProcessPlace;
    restore: SessionState | undefined;
  }
  | { kind: "message"; sid: number; message: JSONRPCMessage }
  | { kind: "close"; sid: number }
  | { kind: "hook"; id: number; ask: HookAsk; origin: HookOrigin }
  | { kind: "stop" };

/** What a session worker tells the bus. */
export type FromSessionWorker =
  | { kind: "message"; sid: number; message: JSONRPCMessage }
  | { kind: "state"; sid: number; state: SessionState }
  | { kind: "log"; sid: number; line: string }
  | { kind: "closed"; sid: number }
  | (
    & { kind: "hook"; id: number }
    & ({ ok: true; answer: HookAnswer } | { ok: false; error: string })
  )
  | { kind: "stopped" };

const post = (message: FromSessionWorker) => self.postMessage(message);
let host: SessionHost | undefined;
let logs: SessionLog | undefined;
/** The sessions held here; `closing` once the bus said close (maybe before it opened). */
interface Held {
  transport: WorkerSideTransport;
  /** Where its log lines go (the bus passes them to its entry). */
  onLog: (line: string) => void;
  session?: StdioSession;
  closing?: boolean;
}
const sessions = new Map<number, Held>();

self.onmessage = async (event: MessageEvent<ToSessionWorker>) => {
  const data = event.data;
  if (data.kind === "message") deliver(data.sid, data.message);
  else if (data.kind === "open") await open(data);
  else if (data.kind === "close") await close(data.sid);
  else if (data.kind === "hook") await answer(data);
  else if (data.kind === "start") {
    logs = sessionLog(data.config.logLevel, data.logFile);
    host = inProcessHost(data, logs);
  } else if (data.kind === "stop") {
    await Promise.all([...sessions.values()].map(({ session }) => session?.stop()));
    await host?.close();
    post({ kind: "stopped" });
    self.close();
  }
};

async function open(data: Extract<ToSessionWorker, { kind: "open" }>): Promise<void> {
  const { sid } = data;
  const transport = new WorkerSideTransport((message) => {
    if (message.kind === "message") post({ kind: "message", sid, message: message.message });
  });
  const onLog = (line: string) => post({ kind: "log", sid, line });
  const held: Held = { transport, onLog };
  sessions.set(sid, held);
  const profile = profileNamed(data.choice.profile)!;
  held.session = await host!.serve(transport, {
    choice: { ...data.choice, profile },
    place: data.place,
    restore: data.restore,
    onChange: (state) => post({ kind: "state", sid, state }),
    onLog,
  });
  if (held.closing) await held.session.stop();
  await held.session.closed;
  sessions.delete(sid);
  post({ kind: "closed", sid });
}

/** Hand `message` to its session, as serving that session (what it logs goes to its entry). */
function deliver(sid: number, message: JSONRPCMessage): void {
  const held = sessions.get(sid);
  if (held) logs!.within(held.onLog, () => held.transport.deliver(message));
}

async function close(sid: number): Promise<void> {
  const held = sessions.get(sid);
  if (!held) return;
  held.closing = true;
  await held.transport.close();
}

async function answer(data: Extract<ToSessionWorker, { kind: "hook" }>): Promise<void> {
  try {
    post({
      kind: "hook",
      id: data.id,
      ok: true,
      answer: await host!.answerHook(data.ask, data.origin),
    });
  } catch (error) {
    post({
      kind: "hook",
      id: data.id,
      ok: false,
      error: String((error as Error)?.message ?? error),
    });
  }
}
