/**
 * `openStdioSession()`: one stdio client's MCP session over any transport:
 * the runtime (store, bus, search engine), the MCP server of its profile, the
 * peer-registry entry (peer-bus servers) and the session record the hooks
 * read; and its orderly stop (leave the registry, close the database, which
 * checkpoints the WAL). It runs in the thread that owns stdio, or in the
 * session worker (`stdio_worker.ts`, which is told the profile's name).
 * `serveSession()` is the same session over a runtime it does not own: the
 * resident bus's (`resident/bus.ts`), shared by all its sessions, which may
 * carry on a session from a bus that died.
 *
 * @module
 */

import type { Transport } from "../mcp/_sdk.ts";
import { type ProcessPlace, SessionRecord } from "../bus/attendance.ts";
import { PeerRegistration } from "../bus/mail.ts";
import { type ConfigWarning, redactUrl, type ResolvedConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Profile } from "../mcp/profiles/mod.ts";
import { createServer, type ServerOptions } from "../mcp/server.ts";
import { openRuntime, type Runtime } from "../runtime.ts";

/** What a stdio session is told. */
export interface StdioSessionOptions extends Omit<ServerOptions, "record"> {
  profile: Profile;
  config: ResolvedConfig;
  /** What was wrong with the configuration (logged as the runtime opens). */
  configWarnings?: ConfigWarning[];
}

/** A running session. */
export interface StdioSession {
  /** Stop serving and close everything (idempotent); resolves when closed. */
  stop(): Promise<void>;
  /** Resolves once the session has closed (its transport closed, or `stop()`). */
  closed: Promise<void>;
}

/** Open the runtime and serve `options.profile` on `transport` until it closes. */
export async function openStdioSession(
  transport: Transport,
  options: StdioSessionOptions,
  log: Logger,
): Promise<StdioSession> {
  const runtime = openRuntime(options.config, {
    log,
    indexing: true,
    configWarnings: options.configWarnings,
  });
  // (Waiting calls are released before the server closes: the runtime is this session's alone.)
  const session = await serveSession(transport, runtime, options, log, {
    beforeClose: () => runtime.bus.changes.close(),
  });
  const closed = session.closed.then(() => runtime.close());
  return {
    stop: async () => {
      await session.stop();
      await closed;
    },
    closed,
  };
}

/**
 * Serve `options.profile` on `transport` over an open runtime (this
 * process's own, or a resident bus's, shared by its sessions) until the
 * transport closes; the runtime stays open. `place` is where the session's
 * client runs (default: this process and its parent); `beforeClose` runs
 * as the session starts to close.
 */
export async function serveSession(
  transport: Transport,
  runtime: Runtime,
  options: StdioSessionOptions,
  log: Logger,
  hooks: { place?: ProcessPlace; beforeClose?: () => void } = {},
): Promise<StdioSession> {
  const { place } = hooks;
  const { config, profile } = options;
  const { bus, search } = runtime;
  const registration = profile.stdio.registerPeer && options.agent
    ? new PeerRegistration(bus, options.agent, config.peerLeaseSeconds)
    : undefined;
  const record = profile.stdio.recordSession
    ? await SessionRecord.open(bus, { profile: profile.name, agent: options.agent, place })
    : undefined;
  const restored = options.sessionState?.restore;
  if (record && restored) await record.adopt(restored);
  const created = createServer(profile, { bus, search }, { ...options, record });
  // (Carried on, the session has a new record: whoever keeps its state learns it.)
  if (restored) options.sessionState?.onChange?.(created.session.state());

  const { promise: closed, resolve } = Promise.withResolvers<void>();
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return await closed;
    stopping = true;
    hooks.beforeClose?.();
    await created.close().catch(() => {});
    await registration?.stop();
    await record?.close();
    resolve();
  };
  transport.onclose = () => void stop();

  await registration?.start().catch((error) =>
    log.warn("Could not register in the peer registry", { error: String(error) })
  );
  await created.server.connect(transport);
  log.info("agent-bus stdio server ready", {
    db: redactUrl(config.dbPath),
    profile: profile.name,
  });
  return { stop, closed };
}
