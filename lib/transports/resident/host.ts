/**
 * Where a resident bus's sessions run. On SQLite, in the bus's own thread,
 * over one runtime ({@linkcode inProcessHost}): its waits are on the local
 * disk. On PostgreSQL a call that waits for the database blocks its thread
 * (the store is synchronous, see `lib/store/mod.ts`), so sessions are
 * spread over a fixed pool of worker threads (`worker_host.ts`), each with
 * one runtime and its connections: the host's connections stay the same
 * whatever the number of agents. The bus itself (`bus.ts`) only accepts,
 * relays and answers what needs no database. Either host also answers MCP
 * clients attached by URL (`http`): over its runtime on SQLite, over an
 * HTTP node's pool of workers of the same size on PostgreSQL.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { ConfigWarning, LogLevel, ResolvedConfig } from "../../config.ts";
import type { ProcessPlace } from "../../bus/place.ts";
import type { Attachment } from "../../bus/unread.ts";
import type { SessionState } from "../../bus/session.ts";
import { appendCapped, createLogger, type Logger } from "../../log.ts";
import type { Transport } from "../../mcp/_sdk.ts";
import type { Profile } from "../../mcp/profiles/mod.ts";
import type { PushMode } from "../../mcp/features/mod.ts";
import { openRuntime } from "../../runtime.ts";
import { answerHook, type HookAnswer, type HookAsk } from "../hook/answer.ts";
import { readProcessTree } from "../hook/process_tree.ts";
import { serveSession, type StdioSession } from "../stdio_session.ts";
import { MAX_BUS_LOG_BYTES } from "./protocol.ts";
import { handlerOver, type Serving, servingOf } from "../http/node.ts";

/** What a session's serve arguments choose (the CLI reads them: `serve.ts`). */
export interface SessionChoice {
  profile: Profile;
  agent: string | undefined;
  serverName?: string | undefined;
  noDrain: boolean;
  push: PushMode;
}

/** One session as the bus hands it to its host. */
export interface HostedSession {
  choice: SessionChoice;
  /** Where its client runs. */
  place: ProcessPlace;
  /** The session to carry on, when its bus died. */
  restore: SessionState | undefined;
  /** Told the session's state whenever it changes (the entry keeps it). */
  onChange(state: SessionState): void;
  /** Told each log line written while serving it (the entry's stderr). */
  onLog(line: string): void;
}

/** Where a hook run came from, as the bus knows it. */
export interface HookOrigin {
  /** The hook process's parent (its client, or a shell the client started). */
  ppid: number;
  /** The sessions attached to the bus now: their servers run (no process tree needed for them). */
  attached: Attachment[];
}

/** What serves the bus's URL (`bus start`). */
export interface UrlServing {
  /** The address it is bound to (the Host/Origin guard accepts it). */
  hostname: string;
  /** The bearer token every request must carry. */
  token: string;
}

/** Where a bus's sessions and hook answers run. */
export interface SessionHost {
  /** Serve `session` on `transport` until it closes. */
  serve(transport: Transport, session: HostedSession): Promise<StdioSession>;
  /** What answers the requests of MCP clients attached by URL, over the same bus. */
  http(options: UrlServing): Promise<Serving>;
  /** Answer a hook run from `origin`. */
  answerHook(ask: HookAsk, origin: HookOrigin): Promise<HookAnswer>;
  /** Close what the host opened (its sessions are stopped before). */
  close(): Promise<void>;
}

/** Options of a host. */
export interface HostOptions {
  config: ResolvedConfig;
  /** The bus's own log (`busLogPath` of its socket), where its threads' lines go too. */
  logFile: string;
  configWarnings?: ConfigWarning[] | undefined;
  /** Run the search indexer (default true; one worker of a pool runs it). */
  indexing?: boolean | undefined;
}

/** A logger whose lines written while serving a session also go to that session. */
export interface SessionLog {
  log: Logger;
  /** Run `fn` (and the async work it starts) as serving the session told by `onLog`. */
  within<T>(onLog: (line: string) => void, fn: () => T): T;
}

/**
 * A {@linkcode SessionLog} at `level`, writing every line to stderr and,
 * with its time, to the bus's log `file` too.
 */
export function sessionLog(level: LogLevel, file: string): SessionLog {
  const current = new AsyncLocalStorage<(line: string) => void>();
  const encoder = new TextEncoder();
  const log = createLogger(level, {
    write(line) {
      appendCapped(file, `${new Date().toISOString()} ${line}`, MAX_BUS_LOG_BYTES);
      Deno.stderr.writeSync(encoder.encode(line));
      current.getStore()?.(line);
    },
  });
  return { log, within: (onLog, fn) => current.run(onLog, fn) };
}

/** Sessions in this thread, over one runtime (SQLite). */
export function inProcessHost(options: HostOptions, logs: SessionLog): SessionHost {
  const { config } = options;
  const runtime = openRuntime(config, {
    log: logs.log,
    indexing: options.indexing ?? true,
    configWarnings: options.configWarnings,
  });
  return {
    serve: (transport, session) =>
      logs.within(session.onLog, () =>
        serveSession(
          transport,
          runtime,
          {
            ...session.choice,
            config,
            sessionState: { restore: session.restore, onChange: session.onChange },
          },
          logs.log,
          { place: session.place },
        )),
    answerHook: (ask, { ppid, attached }) =>
      answerHook(ask, {
        open: () => ({
          bus: runtime.bus,
          parent: ppid,
          attached,
          tree: () => readProcessTree(ppid),
        }),
      }),
    http({ hostname, token }) {
      // (Over this thread's runtime: its sessions and the stdio ones wake each other in process.)
      const handler = handlerOver(
        { bus: runtime.bus, search: runtime.search },
        { config: { ...config, http: { ...config.http, token } }, hostname },
      );
      return Promise.resolve(servingOf(handler));
    },
    close: () => runtime.close(),
  };
}
