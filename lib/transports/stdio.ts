/**
 * `serveStdio()`: the stdio MCP server, one per agent process.
 *
 * Opens the runtime (store, bus, search engine), builds one MCP server, and
 * serves them on stdin/stdout until the client closes stdin or a signal
 * arrives; then it leaves the peer registry (peer-bus servers), closes the
 * database (which checkpoints the WAL) and returns.
 *
 * @module
 */

import { SessionRecord } from "../bus/attendance.ts";
import { PeerRegistration } from "../bus/mail.ts";
import { type ConfigWarning, redactUrl, type ResolvedConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { ProfileName } from "../mcp/profiles.ts";
import { createServer, type ServerOptions } from "../mcp/server.ts";
import { openRuntime } from "../runtime.ts";
import { maxMessageBytes } from "./limits.ts";
import { StdioTransport } from "./stdio_transport.ts";

/** Options of {@linkcode serveStdio}. */
export interface StdioOptions extends ServerOptions {
  profile: ProfileName;
  config: ResolvedConfig;
  configWarnings: ConfigWarning[];
  log: Logger;
}

/**
 * Serve MCP on stdio until the client goes away.
 *
 * @returns when the server has shut down
 */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const { config, log } = options;
  for (const warning of options.configWarnings) log.warn(warning.message);
  const runtime = openRuntime(config, { log, indexing: true });
  const { bus, search } = runtime;
  const registration = options.profile === "peerbus" && options.agent
    ? new PeerRegistration(bus, options.agent, config.peerLeaseSeconds)
    : undefined;
  // Chatbus agents are woken by msg_wait, and have their own identities; the other profiles
  // record the session for the clients' hooks.
  const record = options.profile === "chatbus"
    ? undefined
    : await SessionRecord.open(bus, { profile: options.profile, agent: options.agent });
  const created = createServer(options.profile, { bus, search }, { ...options, record });
  const transport = new StdioTransport({ maxLineBytes: maxMessageBytes(config) });

  const { promise: closed, resolve } = Promise.withResolvers<void>();
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    bus.changes.close(); // release waiting calls before the server closes
    await created.close().catch(() => {});
    await registration?.stop();
    await record?.close();
    await runtime.close();
    resolve();
  };
  transport.onclose = () => void stop();
  const onSignal = () => void stop();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);

  await registration?.start().catch((error) =>
    log.warn("Could not register in the peer registry", { error: String(error) })
  );
  await created.server.connect(transport);
  log.info("agent-bus stdio server ready", {
    db: redactUrl(config.dbPath),
    profile: options.profile,
  });
  if (Deno.stdin.isTerminal()) {
    // A person ran this by hand: say what it is instead of sitting there silently.
    log.warn(
      `MCP server on stdio, database ${
        redactUrl(config.dbPath)
      }. It is meant to be started by an MCP ` +
        `client (see the README); press Ctrl-C to stop`,
    );
  }
  await closed;
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
}
