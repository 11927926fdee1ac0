/**
 * `agent-bus http`: serve the mailboxes and the peer tools over MCP
 * Streamable HTTP.
 *
 * @module
 */

import { DEFAULT_HTTP_PORT, serveHttp } from "../../transports/http/mod.ts";
import { type Command, intOption, parseCommand, UsageError } from "../command.ts";
import { err } from "../format.ts";

const USAGE = `Usage: agent-bus http [--host 127.0.0.1] [--port ${DEFAULT_HTTP_PORT}]

Serve over MCP Streamable HTTP until Ctrl-C or SIGTERM:
  /agents/NAME/mcp/   the mailbox tools of agent NAME (send_to_agent, check_mail)
  /mcp                the peer tools (topics, sync, search)
A POST of {"tool": "...", "args": {...}} runs one tool without a session (for curl).

Binding an address other than loopback requires AGENT_BUS_HTTP_TOKEN; clients then send
"Authorization: Bearer <token>".`;

/** The `http` command. */
export const httpCommand: Command = {
  summary: "Serve mailboxes and the peer tools over Streamable HTTP",
  usage: USAGE,
  async run(args, ctx) {
    const { values, positionals } = parseCommand(args, {
      host: { type: "string" },
      port: { type: "string" },
    });
    if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
    const port = intOption(values.port, "port", DEFAULT_HTTP_PORT);
    if (port > 65535) {
      throw new UsageError(`--port must be a port number (0-65535), not "${values.port}"`);
    }
    await serveHttp({
      config: ctx.config,
      configWarnings: ctx.configWarnings,
      log: ctx.log,
      hostname: values.host ?? "127.0.0.1",
      port,
      onListen: (url) =>
        err(
          `agent-bus http listening on ${url} (mailboxes: ${url}/agents/NAME/mcp/, peer tools: ${url}/mcp)`,
        ),
    });
    return 0;
  },
};
