/**
 * The sessions of a resident bus on PostgreSQL, spread over a fixed pool of
 * worker threads (`session_worker.ts`), `AGENT_BUS_RESIDENT_WORKERS` of
 * them, each with one runtime (its connections, its change feed) shared by
 * the sessions it holds. A new session goes to the worker with the fewest.
 * While a call waits for the database only its worker's thread is blocked:
 * the bus's thread keeps accepting and relaying, and answers each session's
 * `ping` and `tools/list` itself (`../local_answers.ts`), as a stdio
 * server's front does (`../stdio.ts`). Hook runs are answered by a worker
 * too. A worker that fails is replaced; its sessions' connections are
 * closed, and their entries carry them on as the same agents.
 *
 * @module
 */

import type { JSONRPCMessage, Transport } from "../../mcp/_sdk.ts";
import type { Logger } from "../../log.ts";
import { toolListOf } from "../../mcp/tool_runner.ts";
import { localAnswer } from "../local_answers.ts";
import type { HookAnswer, HookAsk } from "../hook/answer.ts";
import type { StdioSession } from "../stdio_session.ts";
import type { HostedSession, HostOptions, SessionHost } from "./host.ts";
import type { FromSessionWorker, ToSessionWorker } from "./session_worker.ts";

/** One worker thread and the sessions it holds. */
interface Slot {
  worker: Worker;
  sessions: Map<number, HostedTransport>;
}

/** The bus's side of a session held by a worker. */
interface HostedTransport {
  transport: Transport;
  session: HostedSession;
  closed: () => void;
}

/** Open `count` session workers for the bus of `options.config`. */
export function workerHost(options: HostOptions, count: number, log: Logger): SessionHost {
  const { config } = options;
  let ids = 0;
  /** Hook runs being answered, by id, and the worker answering each. */
  const hooks = new Map<number, { slot: Slot; settle: (answer: HookAnswer | Error) => void }>();
  const stopped: Promise<void>[] = [];

  const start = (index: number): Slot => {
    const worker = new Worker(new URL("./session_worker.ts", import.meta.url), { type: "module" });
    const slot: Slot = { worker, sessions: new Map() };
    const post = (message: ToSessionWorker) => worker.postMessage(message);
    const { promise: gone, resolve: goneNow } = Promise.withResolvers<void>();
    stopped[index] = gone;
    worker.onmessage = (event: MessageEvent<FromSessionWorker>) => {
      const data = event.data;
      if (data.kind === "stopped") {
        worker.terminate();
        goneNow();
      } else if (data.kind === "hook") {
        hooks.get(data.id)?.settle(data.ok ? data.answer : new Error(data.error));
        hooks.delete(data.id);
      } else {
        const held = slot.sessions.get(data.sid);
        if (!held) return;
        if (data.kind === "message") void held.transport.send(data.message).catch(() => {});
        else if (data.kind === "state") held.session.onChange(data.state);
        else if (data.kind === "log") held.session.onLog(data.line);
        else if (data.kind === "closed") {
          slot.sessions.delete(data.sid);
          held.closed();
        }
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      log.error("A session worker of the resident bus failed; starting another", {
        error: event.message,
      });
      worker.terminate();
      goneNow();
      slots[index] = start(index);
      for (const held of slot.sessions.values()) {
        held.closed();
        void held.transport.close();
      }
      for (const [id, hook] of hooks) {
        if (hook.slot !== slot) continue;
        hooks.delete(id);
        hook.settle(new Error("the session worker that answered it failed"));
      }
    };
    post({
      kind: "start",
      config,
      configWarnings: options.configWarnings ?? [],
      indexing: index === 0,
    });
    return slot;
  };
  const slots = Array.from({ length: count }, (_, index) => start(index));
  const leastBusy = () =>
    slots.reduce((best, slot) => slot.sessions.size < best.sessions.size ? slot : best);

  return {
    async serve(transport, session) {
      const slot = leastBusy();
      const sid = ++ids;
      const post = (message: ToSessionWorker) => slot.worker.postMessage(message);
      const { promise: closed, resolve } = Promise.withResolvers<void>();
      slot.sessions.set(sid, { transport, session, closed: resolve });
      // (Known without the session: a stalled database never delays it.)
      const tools = toolListOf(session.choice.profile, config, {
        noDrain: session.choice.noDrain,
      });
      transport.onmessage = (message: JSONRPCMessage) => {
        const answer = localAnswer(message, tools);
        if (answer !== undefined) void transport.send(answer).catch(() => {});
        else post({ kind: "message", sid, message });
      };
      let stopping = false;
      const stop = (): Promise<void> => {
        if (!stopping) {
          stopping = true;
          post({ kind: "close", sid });
        }
        return closed;
      };
      transport.onclose = () => void stop();
      post({
        kind: "open",
        sid,
        choice: { ...session.choice, profile: session.choice.profile.name },
        place: session.place,
        restore: session.restore,
      });
      await transport.start();
      return { stop, closed } satisfies StdioSession;
    },

    answerHook(ask: HookAsk, ppid: number): Promise<HookAnswer> {
      const id = ++ids;
      const { promise, resolve, reject } = Promise.withResolvers<HookAnswer>();
      const slot = leastBusy();
      hooks.set(id, {
        slot,
        settle: (answer) => answer instanceof Error ? reject(answer) : resolve(answer),
      });
      slot.worker.postMessage({ kind: "hook", id, ask, ppid } satisfies ToSessionWorker);
      return promise;
    },

    async close() {
      for (const slot of slots) slot.worker.postMessage({ kind: "stop" } satisfies ToSessionWorker);
      await Promise.all(stopped);
    },
  };
}
