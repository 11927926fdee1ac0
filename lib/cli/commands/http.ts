/**
 * `agent-bus http`: serve the mailboxes and the peer tools over MCP
 * Streamable HTTP, and the web console.
 *
 * @module
 */

import { DEFAULTS } from "../../config.ts";
import { profileNamed, PROFILES } from "../../mcp/profiles/mod.ts";
import { choiceOption, type Command, defineCommand, intOption, UsageError } from "../command.ts";

/** The profiles `/mcp` can serve. */
const MCP_PROFILES = PROFILES.filter((p) => p.http.atMcp).map((p) => p.name);

const USAGE =
  `Usage: agent-bus http [--host 127.0.0.1] [--port ${DEFAULTS.httpPort}] [--allow-origin ORIGIN]...
                      [--mcp-profile peer|chatbus]

Serve until Ctrl-C or SIGTERM:
  /                   the web console: watch, search and join the conversations
  /api/...            its REST API and live events (see /api/openapi.json)
  /agents/NAME/mcp/   the mailbox tools of agent NAME over MCP (send_to_agent, check_mail)
  /mcp                the peer tools over MCP (topics, sync, search); with --mcp-profile
                      chatbus, the AgentChatBus tools (for clients set up for its URL;
                      /mcp/sse is an alias)
  /chatbus/mcp        the AgentChatBus tools over MCP (threads, msg_post, msg_wait, ...)
A POST of {"tool": "...", "args": {...}} runs one tool without a session (for curl).

Binding an address other than loopback requires AGENT_BUS_HTTP_TOKEN; clients then send
"Authorization: Bearer <token>", and a browser opens the console once as /?token=<token>.
A request from a browser (one with an Origin header) must come from this server's own origin
or one given with --allow-origin (repeatable; also AGENT_BUS_HTTP_ALLOWED_ORIGINS), e.g.
--allow-origin https://dashboard.example.`;

/** The `http` command. */
export const httpCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    host: { type: "string" },
    port: { type: "string" },
    "allow-origin": { type: "string", multiple: true },
    "mcp-profile": { type: "string" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}"`);
    const port = intOption(values.port, "port", ctx.config.http.port);
    if (port > 65535) {
      throw new UsageError(`--port must be a port number (0-65535), not "${values.port}"`);
    }
    const mcpProfile = choiceOption(values["mcp-profile"], "mcp-profile", MCP_PROFILES, "peer");
    const atMcp = profileNamed(mcpProfile)!;
    // Loaded on demand: the stdio server (what clients start most) never pays for it.
    const { serveHttp } = await import("../../transports/http/mod.ts");
    const extraOrigins = values["allow-origin"] ?? [];
    for (const origin of extraOrigins) {
      if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol)) {
        throw new UsageError(
          `--allow-origin needs an origin like https://app.example, not "${origin}"`,
        );
      }
    }
    const config = {
      ...ctx.config,
      http: {
        ...ctx.config.http,
        allowedOrigins: [...ctx.config.http.allowedOrigins, ...extraOrigins],
      },
    };
    await serveHttp({
      config,
      configWarnings: ctx.configWarnings,
      log: ctx.log,
      hostname: values.host ?? ctx.config.http.host ?? "127.0.0.1",
      port,
      atMcp,
      onListen: (url) =>
        ctx.print.err(
          `agent-bus http listening on ${url} (web console: ${url}/, mailboxes: ${url}/agents/NAME/mcp/, ` +
            `${mcpProfile} tools: ${url}/mcp, chatbus: ${url}/chatbus/mcp, REST: ${url}/api/openapi.json)`,
        ),
    });
    return 0;
  },
});
