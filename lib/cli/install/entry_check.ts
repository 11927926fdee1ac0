/**
 * What `doctor` says of a client's entry that starts agent-bus (a process
 * per agent, or an entry of the resident bus): that its command and script
 * exist, that it opens the same database as everyone, that it may reach
 * the resident bus of that database, and how long it takes to answer
 * `initialize` when started as its client starts it.
 *
 * @module
 */

import { loadConfig, redactUrl } from "../../config.ts";
import { type Launch, runsFromSource, scriptOf } from "../../launch.ts";
import { residentAddress } from "../../transports/resident/protocol.ts";
import type { CliContext } from "../command.ts";
import { findExecutable } from "../path_lookup.ts";
import { CLIENT_IDS, CLIENTS } from "./clients.ts";
import { timeInitialize } from "./startup_probe.ts";

/** A finding about one entry, as `doctor` prints it. */
export interface EntryFinding {
  check: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}

/** Whether a client's server entry `name` (`command` with `args`) starts agent-bus. */
export function isAgentBus(name: string, command: string, args: string[]): boolean {
  return /agent-bus/i.test(name) || /agent-bus/i.test(command.split(/[\\/]/).pop() ?? "") ||
    args.some((arg) => /agent[-_]bus.*((main|entry)\.ts|entry\.bundle\.js)$/.test(arg));
}

/** Check the entry `where` of the client `title`, which starts `launch`. */
export async function checkEntry(
  ctx: CliContext,
  title: string,
  where: string,
  launch: Launch,
): Promise<EntryFinding> {
  if (!commandExists(launch.command, ctx.env.PATH ?? "")) {
    return {
      check: title,
      status: "fail",
      detail: `${where} runs ${launch.command}, which does not exist or is not executable`,
      fix: `\`agent-bus install ${clientIdOf(title)}\` again from the agent-bus you use now`,
    };
  }
  const script = scriptOf(launch.args);
  if (script && !exists(script)) {
    return {
      check: title,
      status: "fail",
      detail: `${where} runs ${script}, which no longer exists`,
      fix: `\`agent-bus install ${clientIdOf(title)}\` again from the current checkout`,
    };
  }
  // The database this entry's server will open (its own env, else the default).
  const db = loadConfig({
    HOME: ctx.env.HOME,
    USERPROFILE: ctx.env.USERPROFILE,
    AGENT_BUS_DB: launch.env.AGENT_BUS_DB,
  }, { cwd: ctx.cwd }).config.dbPath;
  if (db !== ctx.config.dbPath) {
    return {
      check: title,
      status: "warn",
      detail: `${where} uses ${redactUrl(db)}, not ${
        redactUrl(ctx.config.dbPath)
      }: its agent will not see the others`,
      fix: `\`agent-bus install ${clientIdOf(title)}\` with the same AGENT_BUS_DB for every client`,
    };
  }
  const socket = unreachableSocket(ctx, launch);
  if (socket !== undefined) {
    return {
      check: title,
      status: "warn",
      detail: `${where} may not connect to the resident bus's socket ${socket}: its agent is ` +
        "served in a process of its own (slower to start, more memory)",
      fix: `\`agent-bus install ${clientIdOf(title)}\` again`,
    };
  }
  // Started as its client starts it: how long until it answers `initialize`.
  const probe = await timeInitialize(launch, ctx.env, ctx.cwd);
  const started = "ms" in probe
    ? `initialize answered ${probe.ms} ms after start`
    : `it did not answer initialize: ${probe.error}`;
  const shown = `${where} → ${
    [launch.command, ...launch.args].join(" ").slice(0, 120)
  }; ${started}`;
  if (!("ms" in probe)) {
    return {
      check: title,
      status: "warn",
      detail: shown,
      fix: "start the entry's command by hand to see why; a client that waits less than a " +
        "server takes begins its agent's first turn without agent-bus's tools (README: " +
        '"Clients that start before the server")',
    };
  }
  return { check: title, status: "ok", detail: shown };
}

/**
 * The resident bus's socket, when `launch` (an entry, or a hook) runs from
 * source without the permission to connect to it (Deno's `--allow-net`
 * names the socket: one written before the socket was named after its
 * database file names another's); undefined when it may, or serves in its
 * own process anyway.
 */
export function unreachableSocket(
  ctx: CliContext,
  launch: Launch,
): string | undefined {
  const script = scriptOf(launch.args);
  const flags = script === undefined
    ? launch.args
    : launch.args.slice(0, launch.args.indexOf(script));
  const standalone = launch.args.includes("--standalone") ||
    launch.env.AGENT_BUS_STANDALONE === "1";
  const address = residentAddress(ctx.config);
  if (!runsFromSource(launch.command) || standalone || "none" in address) return undefined;
  if (flags.some((flag) => ["-A", "--allow-all", "--allow-net"].includes(flag))) return undefined;
  const net = flags.find((flag) => flag.startsWith("--allow-net="))?.slice("--allow-net=".length);
  return net?.split(",").includes(`unix:${address.socket}`) ? undefined : address.socket;
}

function clientIdOf(title: string): string {
  return CLIENT_IDS.find((id) => CLIENTS[id].title === title) ?? "<client>";
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function commandExists(command: string, pathVar: string): boolean {
  return findExecutable(command, pathVar) !== undefined;
}
