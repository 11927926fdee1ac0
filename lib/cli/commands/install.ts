/**
 * `agent-bus install <client>` and `agent-bus uninstall <client>`: add
 * this server to (or remove it from) an MCP client's own config file,
 * leaving every other server and setting in it as it was. The original
 * file is backed up first, the new one written whole (temp file and
 * rename), and the change printed.
 *
 * @module
 */

import { redactUrl } from "../../config.ts";
import {
  choiceOption,
  type CliContext,
  type Command,
  defineCommand,
  type ParsedCommand,
  UsageError,
  userCwd,
} from "../command.ts";
import {
  CLIENT_IDS,
  type ClientId,
  CLIENTS,
  type ClientSpec,
  type Places,
  type Scope,
} from "../install/clients.ts";
import { editJson, editToml } from "../install/config_edit.ts";
import { launchFor } from "../install/launch.ts";
import { cleanMailAgent } from "../../bus/mail.ts";

const PROFILES = ["peer", "peerbus", "teacher", "student", "chatbus"] as const;
type InstallProfile = typeof PROFILES[number];

const OPTIONS_HELP = `  --scope user|project   The user's config (default) or this project's
  --profile PROFILE      peer (default: the topic tools), teacher, student, peerbus, or
                         chatbus (AgentChatBus's tools: threads, msg_post, msg_wait, ...)
  --agent NAME           The peer name (peerbus, required) or who asks/answers (teacher, student)
  --name NAME            The server's name in the client (default agent-bus, or agent-bus-PROFILE)
  --dry-run              Show what would change; write nothing
  --json                 Print the result as JSON`;

const INSTALL_USAGE = `Usage: agent-bus install <${CLIENT_IDS.join("|")}> [options]

Add this server to a client's MCP config, keeping every other server in the file. The original
file is backed up beside it first.

${OPTIONS_HELP}`;

const UNINSTALL_USAGE = `Usage: agent-bus uninstall <${CLIENT_IDS.join("|")}> [options]

Remove this server from a client's MCP config (the file is backed up first).

${OPTIONS_HELP}`;

/** The places a command edits: the user's home and the directory the user is in. */
export function placesOf(ctx: CliContext): Places {
  const env = ctx.env;
  return {
    home: env.HOME ?? env.USERPROFILE ?? userCwd(ctx),
    cwd: userCwd(ctx),
    env,
    os: Deno.build.os,
  };
}

/** The server name a profile is installed under unless `--name` says otherwise. */
export function defaultServerName(profile: InstallProfile): string {
  return profile === "peer" ? "agent-bus" : `agent-bus-${profile}`;
}

interface Plan {
  client: ClientSpec;
  scope: Scope;
  path: string;
  name: string;
  dryRun: boolean;
  json: boolean;
}

/** The options of `install` and `uninstall`. */
const OPTIONS = {
  scope: { type: "string" },
  profile: { type: "string" },
  agent: { type: "string" },
  name: { type: "string" },
  "dry-run": { type: "boolean" },
  json: { type: "boolean" },
} as const;

function plan({ values, positionals }: ParsedCommand<typeof OPTIONS>, ctx: CliContext) {
  if (positionals.length !== 1) throw new UsageError(`Name one client: ${CLIENT_IDS.join(", ")}`);
  const id = positionals[0] as ClientId;
  if (!CLIENT_IDS.includes(id)) {
    throw new UsageError(`Unknown client "${id}"; known: ${CLIENT_IDS.join(", ")}`);
  }
  const scope = choiceOption(values.scope, "scope", ["user", "project"] as const, "user");
  const profile = choiceOption(values.profile, "profile", PROFILES, "peer");
  const client = CLIENTS[id];
  const name = values.name ?? defaultServerName(profile);
  const target: Plan = {
    client,
    scope,
    path: client.path(scope, placesOf(ctx)),
    name,
    dryRun: values["dry-run"] ?? false,
    json: values.json ?? false,
  };
  return { target, profile, agent: values.agent };
}

function profileArgs(profile: InstallProfile, agent: string | undefined): string[] {
  const named = agent === undefined ? [] : ["--agent", cleanMailAgent(agent, "--agent")];
  if (profile === "peerbus") {
    if (agent === undefined) throw new UsageError("--profile peerbus needs --agent NAME");
    return ["--profile", "peerbus", ...named];
  }
  if (profile === "teacher" || profile === "student") return ["--role", profile, ...named];
  if (profile === "chatbus") return ["--profile", "chatbus"];
  return [];
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Back up `path` (if it exists), then replace it with `text`, keeping its permissions. */
async function writeWithBackup(
  path: string,
  text: string,
  existed: boolean,
): Promise<string | undefined> {
  const dir = path.replace(/[\\/][^\\/]*$/, "");
  if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  let backup: string | undefined;
  let mode: number | undefined;
  if (existed) {
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    backup = `${path}.agent-bus-backup-${stamp}`;
    for (let n = 2; await exists(backup); n++) backup = `${path}.agent-bus-backup-${stamp}-${n}`;
    await Deno.copyFile(path, backup);
    mode = (await Deno.stat(path)).mode ?? undefined;
  }
  const temp = `${path}.tmp-agent-bus-${Deno.pid}`;
  await Deno.writeTextFile(temp, text, mode === undefined ? {} : { mode: mode & 0o777 });
  await Deno.rename(temp, path);
  return backup;
}

async function apply(
  ctx: CliContext,
  target: Plan,
  entry: Record<string, unknown> | undefined,
): Promise<number> {
  const { client, path, name } = target;
  const before = await readText(path);
  const keys = { serversKey: client.serversKey, name };
  const edited = client.format === "toml"
    ? editToml(path, before ?? "", keys, entry)
    : editJson(path, before ?? "", keys, entry, client.skeleton);
  const installing = entry !== undefined;
  let backup: string | undefined;
  if (edited.changed && !target.dryRun) {
    backup = await writeWithBackup(path, edited.text, before !== undefined);
  }
  if (target.json) {
    ctx.print.json({
      client: client.id,
      scope: target.scope,
      path,
      name,
      action: installing ? "install" : "uninstall",
      changed: edited.changed,
      dry_run: target.dryRun,
      backup: backup ?? null,
      entry: entry ?? null,
      previous: edited.previous ?? null,
    });
    return 0;
  }
  const where = `${client.title} (${target.scope} scope, ${path})`;
  if (!edited.changed) {
    ctx.print.out(
      installing
        ? `"${name}" is already installed in ${where}; nothing changed.`
        : `"${name}" is not in ${where}; nothing changed.`,
    );
    return 0;
  }
  const done = installing
    ? (edited.previous === undefined ? "added to" : "updated in")
    : "removed from";
  ctx.print.out(
    target.dryRun
      ? `Dry run, nothing written: "${name}" would be ${done} ${where}`
      : `"${name}" ${done} ${where}`,
  );
  if (entry) {
    // The file holds the database URL as given; what is printed never shows its password.
    const shown = JSON.stringify(entry, null, 2).replaceAll(
      ctx.config.dbPath,
      redactUrl(ctx.config.dbPath),
    );
    ctx.print.out(shown.split("\n").map((line) => `  ${line}`).join("\n"));
  }
  if (backup) ctx.print.out(`Backup of the previous file: ${backup}`);
  if (!target.dryRun) {
    ctx.print.err(`Restart ${client.title} (or start a new session) to load the change.`);
  }
  return 0;
}

/** The `install` command. */
export const installCommand: Command = defineCommand({
  summary:
    "Add this server to an MCP client's config (claude-code, codex, gemini, cursor, opencode, vscode)",
  usage: INSTALL_USAGE,
  options: OPTIONS,
  async run(parsed, ctx) {
    const { target, profile, agent } = plan(parsed, ctx);
    if (ctx.config.dbPath === ":memory:") {
      throw new UsageError(
        "AGENT_BUS_DB is :memory:; every agent would get its own empty bus. Point it at a file",
      );
    }
    const launch = launchFor({
      execPath: Deno.execPath(),
      dbPath: ctx.config.dbPath,
      args: profileArgs(profile, agent),
      env: ctx.env,
    });
    if (/[\\/]_npx[\\/]/.test(launch.command)) {
      ctx.print.err(
        "Note: Deno runs from npx's cache here, so the entry breaks if that cache is cleared. " +
          "For a stable path, install Deno (npm install -g deno@2.9.6) and run install again.",
      );
    }
    return await apply(ctx, target, target.client.entry(launch));
  },
});

/** The `uninstall` command. */
export const uninstallCommand: Command = defineCommand({
  summary: "Remove this server from an MCP client's config",
  usage: UNINSTALL_USAGE,
  options: OPTIONS,
  async run(parsed, ctx) {
    return await apply(ctx, plan(parsed, ctx).target, undefined);
  },
});
