/**
 * `agent-bus bus run|start|status|stop`: the resident bus that MCP clients'
 * entries attach to (`lib/transports/resident/`). `run` is what an entry
 * starts when none runs; `start` starts it if none runs and has it serve
 * MCP clients by URL too; `status` shows the one of this database (and
 * version and settings), `stop` ends it and every session on it.
 *
 * @module
 */

import { serveResidentBus } from "../../transports/resident/bus.ts";
import { reachBus } from "../../transports/resident/entry.ts";
import {
  busLogPath,
  type BusStatus,
  closeQuietly,
  connect,
  exchange,
  type ResidentAddress,
  residentAddress,
  SESSION_SETTINGS,
  settingsKey,
  turnedAwayText,
  VERSION,
} from "../../transports/resident/protocol.ts";
import { tokenPath } from "../../transports/resident/token.ts";
import { loadConfig } from "../../config.ts";
import {
  type CliContext,
  defineCommand,
  intOption,
  subcommandError,
  UsageError,
} from "../command.ts";
import { chooseSession } from "./serve.ts";
import { counted } from "../../strings.ts";

const USAGE = `Usage: agent-bus bus <command> [--port N] [--json]

The resident bus: one process per database that serves every agent's session on this host
(every MCP client's entry attaches to it, starting it if none runs, unless --standalone).

Commands:
  status   Show the bus of this database (AGENT_BUS_DB): its pid, version, sessions and URL
  start    Start it if none runs, and have it serve MCP clients by URL too, on this host only:
           http://127.0.0.1:PORT/mcp (--port, default AGENT_BUS_RESIDENT_PORT or 8766), to
           clients that send the token kept beside its socket (agent-bus.token, mode 0600;
           \`agent-bus install <client> --url\` writes it into the client's config). A bus that
           serves a URL does not end when idle: \`bus stop\` ends it
  stop     Stop it (its sessions end; their clients start their servers again)
  run      Run it in this process (what an entry starts; it ends after
           AGENT_BUS_RESIDENT_IDLE_MS without a session; with --port, it serves the URL from
           the start and does not end when idle)`;

/** The `bus` command. */
export const busCommand = defineCommand({
  usage: USAGE,
  options: { json: { type: "boolean" }, port: { type: "string" } },
  async run({ values, positionals }, ctx) {
    const [what, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`Unexpected "${extra[0]}"`);
    const address = residentAddress(ctx.config);
    if ("none" in address) {
      ctx.print.err(`No resident bus here: ${address.none}`);
      return 1;
    }
    if (values.port !== undefined && what !== "run" && what !== "start") {
      throw new UsageError("--port goes with start or run");
    }
    const port = intOption(values.port, "port", ctx.config.resident.port, 0, 65535);
    if (what === "run") {
      await serveResidentBus({
        config: ctx.config,
        configWarnings: ctx.configWarnings,
        address,
        idleMs: ctx.config.resident.idleMs,
        settings: settingsKey(ctx.env),
        choose: (args, env) => chooseFor(args, env, ctx),
        say: (line) => ctx.print.out(line),
        port: values.port === undefined ? undefined : port,
      });
      return 0;
    }
    if (what === "start") return await start(ctx, address, port, values.json ?? false);
    if (what !== "status" && what !== "stop") {
      throw subcommandError("bus", what, ["status", "start", "stop", "run"]);
    }
    const conn = await connect(address.socket);
    // (A bus that dies as it is asked counts as none.)
    const answer = conn &&
      await exchange(conn, what === "stop" ? { stop: true } : { status: true })
        .catch(() => undefined);
    if (conn) closeQuietly(conn);
    const log = busLogPath(address.socket);
    if (!answer) {
      if (values.json) {
        ctx.print.out(JSON.stringify({ running: false, socket: address.socket, log }));
      } else {
        const logged = await Deno.stat(log).then(() => `; its log: ${log}`, () => "");
        ctx.print.out(`No resident bus runs for ${ctx.config.dbPath} (${address.socket})${logged}`);
      }
      return what === "status" ? 0 : 1;
    }
    if (!answer.ok) throw new Error(answer.error);
    const bus = answer.bus;
    const sessions = counted(bus.sessions, "session");
    if (values.json) ctx.print.out(JSON.stringify({ running: what === "status", ...bus, log }));
    else if (what === "stop") {
      ctx.print.out(`Stopped the resident bus (pid ${bus.pid}, ${sessions})`);
    } else {
      const turnedAway = turnedAwayText(bus);
      ctx.print.out(
        `Resident bus: pid ${bus.pid}, agent-bus ${bus.version}, ${sessions}, since ${bus.started_at}\n` +
          `  database ${bus.db}\n  socket ${bus.socket}${urlLine(bus)}\n  log ${log}` +
          (turnedAway === undefined ? "" : `\n  ${turnedAway}`),
      );
    }
    return 0;
  },
});

/** `bus start`: reach the bus (started if none runs) and have it serve its URL. */
async function start(
  ctx: CliContext,
  address: ResidentAddress,
  port: number,
  json: boolean,
): Promise<number> {
  const conn = await reachBus(ctx.config, ctx.env, address);
  let answer;
  try {
    answer = await exchange(conn, {
      listen: { version: VERSION, settings: settingsKey(ctx.env), port },
    });
  } finally {
    closeQuietly(conn);
  }
  if (!answer.ok) {
    const why = answer.reason === "settings"
      ? `${answer.error}; \`agent-bus bus stop\` it, or start it with the same settings`
      : answer.error;
    ctx.print.err(`The resident bus does not serve a URL: ${why}`);
    return 1;
  }
  const token = tokenPath(address.socket);
  if (json) ctx.print.out(JSON.stringify({ running: true, ...answer.bus, token_file: token }));
  else {
    ctx.print.out(
      `Resident bus: pid ${answer.bus.pid}, serving MCP clients at ${answer.bus.url}\n` +
        `  they send "Authorization: Bearer <the token in ${token}>"\n` +
        `  (agent-bus install <client> --url writes it); agent-bus bus stop ends it`,
    );
  }
  return 0;
}

/** The status's line about its URL, if it serves one. */
function urlLine(bus: BusStatus): string {
  return bus.url === null ? "" : `\n  url ${bus.url} (${counted(bus.http_sessions, "session")})`;
}

/** A session's choice, read with the entry's own settings (its agent name, its role). */
function chooseFor(args: string[], env: Record<string, string>, ctx: CliContext) {
  const own = Object.fromEntries(
    Object.entries(ctx.env).filter(([key]) => !SESSION_SETTINGS.includes(key)),
  );
  const { config } = loadConfig({ ...own, ...env }, { cwd: ctx.cwd });
  try {
    return chooseSession(args, { config, log: ctx.log });
  } catch (error) {
    if (error instanceof UsageError) throw Object.assign(error, { usage: true });
    throw error;
  }
}
