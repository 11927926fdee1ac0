/**
 * The front of an `agent-bus http` node on PostgreSQL: its session workers,
 * and the thread that accepts connections and hands each request to one.
 *
 * The store is synchronous (see `lib/store/mod.ts`): a call that waits for
 * PostgreSQL blocks its thread. So on PostgreSQL this thread opens no store
 * at all. Each of `AGENT_BUS_HTTP_WORKERS` workers (`node_worker.ts`) runs
 * the node's handler over a runtime and connections of its own, and this
 * thread passes it whole requests and gets whole responses back (bodies as
 * transferred streams, so event streams flow as they are written). An MCP
 * session stays on the worker that opened it; a request without a session
 * goes to the worker with the fewest sessions. This thread also answers, for
 * the sessions it knows, `ping` and `tools/list` itself (made from the
 * route's profile, `../local_answers.ts`): while one worker waits
 * for a stalled database, every session still gets those at once, and the
 * sessions of the other workers are served as usual.
 *
 * @module
 */

import type { ConfigWarning, ResolvedConfig } from "../../config.ts";
import { BusError, type ErrorCode } from "../../errors.ts";
import { bodyUnreadable, errorResponse } from "../../http_respond.ts";
import type { Logger } from "../../log.ts";
import type { Profile } from "../../mcp/profiles/mod.ts";
import { localAnswer } from "../local_answers.ts";
import { toolListOf } from "../../mcp/tool_runner.ts";
import { checkRequest, type GuardPolicy, guardPolicy } from "./guard.ts";
import type { Serving } from "./node.ts";
import { legacySessionOf } from "./legacy_sse.ts";
import { routeOf } from "./routes.ts";

/** How a worker starts: plain data, the profile by its name. */
export interface WorkerStart {
  config: ResolvedConfig;
  hostname: string;
  atMcp: string;
  indexing: boolean;
  configWarnings: ConfigWarning[];
}

/** A body as it crosses to a worker: a transferred stream, or bytes this thread read. */
type Body = ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer> | null;

/** What the front tells a worker. */
export type ToNodeWorker =
  | { kind: "start"; options: WorkerStart }
  | {
    kind: "request";
    id: number;
    method: string;
    url: string;
    headers: [string, string][];
    body: Body;
  }
  | { kind: "touch"; sessionId: string }
  /** The client of request `id` went away: what it started may stop. */
  | { kind: "abort"; id: number }
  | { kind: "stop" };

/** What a worker tells the front. */
export type FromNodeWorker =
  | { kind: "ready" }
  | { kind: "failed"; code: ErrorCode; message: string }
  | {
    kind: "response";
    id: number;
    status: number;
    headers: [string, string][];
    body: ReadableStream<Uint8Array> | null;
  }
  | { kind: "opened"; sessionId: string; route: string }
  | { kind: "closed"; sessionId: string }
  | { kind: "stopped" };

/** Largest body this thread reads to look for a `ping` or `tools/list` (theirs are far smaller). */
const LOCAL_BODY_MAX = 1024;
/** How long a stopping worker may take before it is terminated. */
const STOP_MS = 15_000;

/** What {@linkcode NodePool.open} needs. */
export interface NodePoolOptions {
  config: ResolvedConfig;
  configWarnings: ConfigWarning[];
  log: Logger;
  hostname: string;
  /** What `/mcp` serves: a built-in profile. */
  atMcp: Profile;
}

/** One session worker and what waits on it. */
class SessionWorker {
  readonly worker: Worker;
  sessions = 0;
  readonly pending = new Map<number, (response: Response) => void>();
  readonly started: Promise<void>;
  readonly stopped: Promise<void>;
  #stopped: () => void;
  /** Ends of the response bodies still flowing from this worker. */
  readonly #flowing = new Set<() => void>();

  constructor(start: WorkerStart, onMessage: (message: FromNodeWorker) => void) {
    this.worker = new Worker(new URL("./node_worker.ts", import.meta.url), { type: "module" });
    const started = Promise.withResolvers<void>();
    const stopped = Promise.withResolvers<void>();
    this.started = started.promise;
    this.stopped = stopped.promise;
    this.#stopped = stopped.resolve;
    this.worker.onmessage = (event: MessageEvent<FromNodeWorker>) => {
      const data = event.data;
      if (data.kind === "ready") started.resolve();
      else if (data.kind === "failed") started.reject(new BusError(data.code, data.message));
      else if (data.kind === "stopped") {
        this.#endFlowing();
        stopped.resolve();
      } else if (data.kind === "response") {
        const { status, headers } = data;
        const body = data.body && this.#relay(data.body);
        this.pending.get(data.id)?.(new Response(body, { status, headers }));
        this.pending.delete(data.id);
      } else onMessage(data);
    };
    this.post({ kind: "start", options: start });
  }

  post(message: ToNodeWorker, transfer: Transferable[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  /**
   * The worker's body, passed on here so that it ends when the worker does:
   * a stream's last chunks can be lost when a worker closes, and an open
   * stream would hold the server's shutdown forever.
   */
  #relay(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    // A stream the worker ended is passed on whole; one cut short (the worker stopped, or its
    // stream failed) drops what waits, so a client that does not read cannot hold the
    // server's shutdown.
    let end = (_dropped: boolean): void => {};
    const stop = () => end(true);
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        end = (dropped) => {
          this.#flowing.delete(stop);
          try {
            // (What still waits for a client that does not read is dropped; Deno logs that.)
            const waiting = (controller.desiredSize ?? 1) <= 0;
            if (dropped && waiting) controller.error(new Error("The session worker stopped"));
            else controller.close();
          } catch { /* already closed */ }
          void reader.cancel().catch(() => {});
        };
        this.#flowing.add(stop);
      },
      pull: async (controller) => {
        const read = await reader.read().catch(() => undefined);
        if (read === undefined) end(true);
        else if (read.done) end(false);
        else controller.enqueue(read.value);
      },
      cancel: (reason) => {
        this.#flowing.delete(stop);
        return reader.cancel(reason).catch(() => {});
      },
    });
  }

  #endFlowing(): void {
    for (const end of [...this.#flowing]) end();
  }

  /** End the worker at once, answering what waits on it. */
  terminate(): void {
    this.worker.terminate();
    this.#endFlowing();
    this.#stopped();
    const failure = errorResponse(new BusError("INTERNAL_ERROR", "The session worker ended"));
    for (const answer of this.pending.values()) answer(failure.clone());
    this.pending.clear();
  }
}

/** A node's session workers behind one front. */
export class NodePool implements Serving {
  readonly #workers: SessionWorker[] = [];
  readonly #sessions = new Map<string, { worker: SessionWorker; route: string }>();
  readonly #tools = new Map<string, unknown>();
  readonly #policy: GuardPolicy;
  readonly #atMcp: Profile;
  readonly #config: ResolvedConfig;
  readonly #log: Logger;
  #nextId = 0;
  #turn = 0;
  #stopping = false;
  #closing: Promise<void> | undefined;

  private constructor(options: NodePoolOptions) {
    this.#policy = guardPolicy(options.hostname, options.config.http);
    this.#atMcp = options.atMcp;
    this.#config = options.config;
    this.#log = options.log;
  }

  /**
   * Start the workers and wait until each has opened its runtime.
   *
   * @throws {BusError} what a worker's runtime failed with
   */
  static async open(options: NodePoolOptions): Promise<NodePool> {
    const pool = new NodePool(options);
    for (let i = 0; i < options.config.http.workers; i++) {
      pool.#spawn({
        config: options.config,
        hostname: options.hostname,
        atMcp: options.atMcp.name,
        // One indexer and one set of warnings per node.
        indexing: i === 0,
        configWarnings: i === 0 ? options.configWarnings : [],
      }, i);
    }
    try {
      await Promise.all(pool.#workers.map((w) => w.started));
    } catch (error) {
      for (const worker of pool.#workers) worker.terminate();
      throw error;
    }
    return pool;
  }

  #spawn(start: WorkerStart, slot: number): void {
    const worker: SessionWorker = new SessionWorker(start, (message) => {
      if (message.kind === "opened") {
        this.#sessions.set(message.sessionId, { worker, route: message.route });
        worker.sessions++;
      } else if (message.kind === "closed") {
        if (this.#sessions.delete(message.sessionId)) worker.sessions--;
      }
    });
    worker.worker.onerror = (event) => {
      event.preventDefault();
      this.#log.error("A session worker failed; its sessions are lost", { error: event.message });
      worker.terminate();
      for (const [id, session] of this.#sessions) {
        if (session.worker === worker) this.#sessions.delete(id);
      }
      if (!this.#stopping) this.#spawn({ ...start, configWarnings: [] }, slot);
    };
    this.#workers[slot] = worker;
  }

  get sessions(): number {
    return this.#sessions.size;
  }

  /** Answer a request: here when it is a known session's `ping` or `tools/list`, else in a worker. */
  async handle(request: Request): Promise<Response> {
    if (this.#stopping) {
      return errorResponse(new BusError("DB_UNAVAILABLE", "The server is shutting down"));
    }
    // (A legacy HTTP+SSE session names itself in the query, and is answered on its stream.)
    const sessionId = request.headers.get("mcp-session-id");
    const named = sessionId ?? legacySessionOf(new URL(request.url));
    const session = named === null ? undefined : this.#sessions.get(named);
    if (session === undefined) return await this.#forward(this.#pick(), request, request.body);
    const declared = request.headers.get("content-length");
    const profile = this.#answerable(request, session.route);
    if (
      sessionId === null || request.method !== "POST" || declared === null ||
      Number(declared) > LOCAL_BODY_MAX || profile === undefined
    ) {
      return await this.#forward(session.worker, request, request.body);
    }
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = new Uint8Array(await request.arrayBuffer());
    } catch (error) {
      return errorResponse(bodyUnreadable(error)); // (the client went away mid-body)
    }
    const answer = localAnswer(parseJson(bytes), this.#toolList(profile));
    if (answer === undefined) return await this.#forward(session.worker, request, bytes);
    session.worker.post({ kind: "touch", sessionId });
    return Response.json(answer);
  }

  /**
   * The profile of the request's route when this thread may answer it: it
   * reaches its session's route, passes the guard and takes JSON.
   */
  #answerable(request: Request, route: string): Profile | undefined {
    const reached = routeOf(new URL(request.url).pathname, this.#atMcp);
    const mayAnswer = reached !== undefined && "key" in reached && reached.key === route &&
      checkRequest(request.headers, this.#policy).ok &&
      (request.headers.get("accept") ?? "").includes("application/json");
    return mayAnswer ? reached.profile : undefined;
  }

  /** A profile's `tools/list` answer, made here once (it needs no database). */
  #toolList(profile: Profile): unknown {
    let tools = this.#tools.get(profile.name);
    if (tools === undefined) {
      tools = toolListOf(profile, this.#config);
      this.#tools.set(profile.name, tools);
    }
    return tools;
  }

  /** The worker with the fewest sessions, taking turns among equals. */
  #pick(): SessionWorker {
    const count = this.#workers.length;
    const first = this.#turn++ % count;
    let best = this.#workers[first]!;
    for (let i = 1; i < count; i++) {
      const worker = this.#workers[(first + i) % count]!;
      if (worker.sessions < best.sessions) best = worker;
    }
    return best;
  }

  #forward(worker: SessionWorker, request: Request, body: Body): Promise<Response> {
    const id = this.#nextId++;
    const { promise, resolve } = Promise.withResolvers<Response>();
    worker.pending.set(id, resolve);
    request.signal.addEventListener("abort", () => worker.post({ kind: "abort", id }), {
      once: true,
    });
    const transfer = body instanceof ReadableStream ? [body] : body ? [body.buffer] : [];
    worker.post({
      kind: "request",
      id,
      method: request.method,
      url: request.url,
      headers: [...request.headers],
      body,
    }, transfer as Transferable[]);
    return promise;
  }

  /** Stop every worker: each closes its sessions and its runtime. */
  closeSessions(): Promise<void> {
    this.#stopping = true;
    this.#closing ??= Promise.all(this.#workers.map(async (worker) => {
      worker.post({ kind: "stop" });
      const timer = setTimeout(() => worker.terminate(), STOP_MS);
      await worker.stopped;
      clearTimeout(timer);
      worker.terminate();
    })).then(() => {});
    return this.#closing;
  }

  /** Nothing is left once the workers stopped. */
  close(): Promise<void> {
    return this.closeSessions();
  }
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}
