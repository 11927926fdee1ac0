/**
 * `serveStdio()`: the stdio MCP server, one per agent process.
 *
 * Opens the store, builds the bus and one MCP server, and serves them on
 * stdin/stdout until the client closes stdin or a signal arrives; then it
 * closes the database (which checkpoints the WAL) and exits.
 *
 * @module
 */

import { createBus } from "../bus/mod.ts";
import type { ConfigWarning, ResolvedConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { ProfileName } from "../mcp/profiles.ts";
import { createServer } from "../mcp/server.ts";
import { SearchEngine } from "../search/mod.ts";
import { openStore } from "../store/mod.ts";
import { StdioTransport } from "./stdio_transport.ts";

/** Options of {@linkcode serveStdio}. */
export interface StdioOptions {
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
  const store = openStore(config.dbPath, { busyTimeoutMs: config.busyTimeoutMs, log });
  const bus = createBus({ store, config, log });
  const search = new SearchEngine({ store, config, log });
  search.start();
  const { server } = createServer(options.profile, { bus, search });
  const transport = new StdioTransport({ maxLineBytes: maxLineBytes(config) });

  const { promise: closed, resolve } = Promise.withResolvers<void>();
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    bus.changes.close();
    await server.close().catch(() => {});
    await search.close();
    store.close();
    resolve();
  };
  transport.onclose = () => void stop();
  const onSignal = () => void stop();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);

  await server.connect(transport);
  log.info("agent-bus stdio server ready", { db: config.dbPath, profile: options.profile });
  if (Deno.stdin.isTerminal()) {
    // A person ran this by hand: say what it is instead of sitting there silently.
    log.warn(
      `MCP server on stdio, database ${config.dbPath}. It is meant to be started by an MCP ` +
        `client (see the README); press Ctrl-C to stop`,
    );
  }
  await closed;
  for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
}

/**
 * The longest request line worth reading: a full outbox of maximal
 * messages, each character JSON-escaped to six bytes, plus room for the rest.
 */
function maxLineBytes(config: ResolvedConfig): number {
  return Math.max(16 << 20, config.maxOutbox * config.maxMessageChars * 6 + (1 << 20));
}
