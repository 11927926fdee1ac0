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
 * closed, and their entries carry them on as the same agents. Clients
 * attached by URL are served by an HTTP node's pool (`../http/node_pool.ts`)
 * of as many workers, opened when the bus is asked to listen.
 *
 * @module
 */

import type { JSONRPCMessage, Transport } from "../../mcp/_sdk.ts";
import type { Logger } from "../../log.ts";
import { toolListOf } from "../../mcp/tool_runner.ts";
import { localAnswer } from "../local_answers.ts";
import type { HookAnswer, HookAsk } from "../hook/answer.ts";
import type { StdioSession } from "../stdio_session.ts";
import type { HookOrigin, HostedSession, HostOptions, SessionHost, UrlServing } from "./host.ts";
import { profile } from "../../mcp/profiles/mod.ts";
import type { Serving } from "../http/node.ts";
import { NodePool } from "../http/node_pool.ts";
import type { FromSessionWorker, ToSessionWorker } from "./session_worker.ts";

/** One worker thread, the sessions it holds, and when it has stopped. */
interface Slot {
  worker: Worker;
  sessions: Map<number, HostedTransport>;
  stopped: Promise<void>;
}

/** The bus's side of a session held by a worker. */
interface HostedTransport {
  transport: Transport;
  session: HostedSession;
  closed: () => void;
}

/** Open `count` session workers for the bus of `options.config`. */
export function workerHost(options: HostOptions, count: number, log: Logger): SessionHost {
  return new WorkerHost(options, count, log);
}

/** A hook run being answered, and the worker answering it. */
interface HookRun {
  slot: Slot;
  settle: (answer: HookAnswer | Error) => void;
}

class WorkerHost implements SessionHost {
  readonly #options: HostOptions;
  readonly #log: Logger;
  readonly #slots: Slot[];
  readonly #hooks = new Map<number, HookRun>();
  #ids = 0;

  constructor(options: HostOptions, count: number, log: Logger) {
    this.#options = options;
    this.#log = log;
    this.#slots = [];
    for (let index = 0; index < count; index++) this.#slots.push(this.#start(index));
  }

  async serve(transport: Transport, session: HostedSession): Promise<StdioSession> {
    const slot = this.#leastBusy();
    const sid = ++this.#ids;
    const post = (message: ToSessionWorker) => slot.worker.postMessage(message);
    const { promise: closed, resolve } = Promise.withResolvers<void>();
    slot.sessions.set(sid, { transport, session, closed: resolve });
    // (Known without the session: a stalled database never delays it.)
    const tools = toolListOf(session.choice.profile, this.#options.config, {
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
    return { stop, closed };
  }

  /** An HTTP node's pool as large as this one, with connections of its own. */
  http({ hostname, token }: UrlServing): Promise<Serving> {
    const { config } = this.#options;
    return NodePool.open({
      config: { ...config, http: { ...config.http, token, workers: this.#slots.length } },
      configWarnings: [],
      log: this.#log,
      hostname,
      atMcp: profile("peer"),
    });
  }

  answerHook(ask: HookAsk, origin: HookOrigin): Promise<HookAnswer> {
    const id = ++this.#ids;
    const { promise, resolve, reject } = Promise.withResolvers<HookAnswer>();
    const slot = this.#leastBusy();
    this.#hooks.set(id, {
      slot,
      settle: (answer) => answer instanceof Error ? reject(answer) : resolve(answer),
    });
    slot.worker.postMessage({ kind: "hook", id, ask, origin } satisfies ToSessionWorker);
    return promise;
  }

  async close(): Promise<void> {
    for (const slot of this.#slots) {
      slot.worker.postMessage({ kind: "stop" } satisfies ToSessionWorker);
    }
    await Promise.all(this.#slots.map((slot) => slot.stopped));
  }

  #leastBusy(): Slot {
    return this.#slots.reduce((best, slot) =>
      slot.sessions.size < best.sessions.size ? slot : best
    );
  }

  /** Start the worker of slot `index` (indexing in the first only). */
  #start(index: number): Slot {
    const worker = new Worker(new URL("./session_worker.ts", import.meta.url), { type: "module" });
    const { promise: stopped, resolve: gone } = Promise.withResolvers<void>();
    const slot: Slot = { worker, sessions: new Map(), stopped };
    worker.onmessage = (event: MessageEvent<FromSessionWorker>) => {
      if (event.data.kind !== "stopped") return this.#heard(slot, event.data);
      worker.terminate();
      gone();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      gone();
      this.#failed(slot, index, event.message);
    };
    worker.postMessage(
      {
        kind: "start",
        config: this.#options.config,
        logFile: this.#options.logFile,
        configWarnings: this.#options.configWarnings ?? [],
        indexing: index === 0,
      } satisfies ToSessionWorker,
    );
    return slot;
  }

  /** What a worker says of a session or a hook run. */
  #heard(slot: Slot, data: Exclude<FromSessionWorker, { kind: "stopped" }>): void {
    if (data.kind === "hook") {
      this.#hooks.get(data.id)?.settle(data.ok ? data.answer : new Error(data.error));
      this.#hooks.delete(data.id);
      return;
    }
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

  /** A worker failed: another takes its place; its sessions' entries carry them on. */
  #failed(slot: Slot, index: number, error: string): void {
    this.#log.error("A session worker of the resident bus failed; starting another", { error });
    slot.worker.terminate();
    this.#slots[index] = this.#start(index);
    for (const held of slot.sessions.values()) {
      held.closed();
      void held.transport.close();
    }
    for (const [id, hook] of this.#hooks) {
      if (hook.slot !== slot) continue;
      this.#hooks.delete(id);
      hook.settle(new Error("the session worker that answered it failed"));
    }
  }
}
