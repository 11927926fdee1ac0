/**
 * `agent-bus bus run|status|stop`: the resident bus that MCP clients'
 * entries attach to (`lib/transports/resident/`). `run` is what an entry
 * starts when none runs; `status` shows the one of this database (and
 * version and settings), `stop` ends it and every session on it.
 *
 * @module
 */

import { serveResidentBus } from "../../transports/resident/bus.ts";
import {
  closeQuietly,
  connect,
  exchange,
  residentAddress,
  SESSION_SETTINGS,
  settingsKey,
} from "../../transports/resident/protocol.ts";
import { loadConfig } from "../../config.ts";
import { type CliContext, defineCommand, UsageError } from "../command.ts";
import { chooseSession } from "./serve.ts";

const USAGE = `Usage: agent-bus bus <command> [--json]

The resident bus: one process per database that serves every agent's session on this host
(every MCP client's entry attaches to it, starting it if none runs, unless --standalone).

Commands:
  status   Show the bus of this database (AGENT_BUS_DB): its pid, version and sessions
  stop     Stop it (its sessions end; their clients start their servers again)
  run      Run it in this process (what an entry starts; it ends after
           AGENT_BUS_RESIDENT_IDLE_MS without a session)`;

/** The `bus` command. */
export const busCommand = defineCommand({
  usage: USAGE,
  options: { json: { type: "boolean" } },
  async run({ values, positionals }, ctx) {
    const [what, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`Unexpected "${extra[0]}"`);
    const address = residentAddress(ctx.config);
    if ("none" in address) {
      ctx.print.err(`No resident bus here: ${address.none}`);
      return 1;
    }
    if (what === "run") {
      await serveResidentBus({
        config: ctx.config,
        configWarnings: ctx.configWarnings,
        address,
        idleMs: ctx.config.resident.idleMs,
        settings: settingsKey(ctx.env),
        choose: (args, env) => chooseFor(args, env, ctx),
        say: (line) => ctx.print.out(line),
      });
      return 0;
    }
    if (what !== "status" && what !== "stop") {
      throw new UsageError("Name a command: status, stop or run");
    }
    const conn = await connect(address.socket);
    // (A bus that dies as it is asked counts as none.)
    const answer = conn &&
      await exchange(conn, what === "stop" ? { stop: true } : { status: true })
        .catch(() => undefined);
    if (conn) closeQuietly(conn);
    if (!answer) {
      if (values.json) ctx.print.out(JSON.stringify({ running: false, socket: address.socket }));
      else ctx.print.out(`No resident bus runs for ${ctx.config.dbPath} (${address.socket})`);
      return what === "status" ? 0 : 1;
    }
    if (!answer.ok) throw new Error(answer.error);
    const bus = answer.bus;
    if (values.json) ctx.print.out(JSON.stringify({ running: what === "status", ...bus }));
    else if (what === "stop") {
      ctx.print.out(`Stopped the resident bus (pid ${bus.pid}, ${bus.sessions} sessions)`);
    } else {
      ctx.print.out(
        `Resident bus: pid ${bus.pid}, agent-bus ${bus.version}, ${bus.sessions} sessions, since ${bus.started_at}\n` +
          `  database ${bus.db}\n  socket ${bus.socket}`,
      );
    }
    return 0;
  },
});

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
