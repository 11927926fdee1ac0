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
  intOption,
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
import { CODEX_TRUST_BY_HAND, trustCodexHooks, untrusted } from "../install/codex_trust.ts";
import { editJson, editToml, updateJson } from "../install/config_edit.ts";
import { applyFiles, type FileChange, type FileResult } from "../install/apply_files.ts";
import {
  claudeTrustEdit,
  dropIfEmpty,
  hookClient,
  hookEdits,
  hooksPath,
  type JsonEdit,
} from "../install/hooks.ts";
import { launchFor, runsFromSource } from "../../launch.ts";
import { hookCommand, prepareDenoCache } from "../install/launch.ts";
import { MAX_WAIT_SECONDS } from "../hook/mod.ts";
import { kindOf, PROTOCOLS } from "../../transports/hook/protocols.ts";
import { residentAddress, statusAt } from "../../transports/resident/protocol.ts";
import { readToken, residentToken, tokenPath } from "../../transports/resident/token.ts";
import { cleanMailAgent } from "../../bus/mail.ts";
import {
  type Profile,
  profile as profileOf,
  profileNamed,
  PROFILES,
} from "../../mcp/profiles/mod.ts";
import { pathOf } from "../../transports/http/routes.ts";

/** Seconds a client lets a hook run beyond its on-call wait. */
const HOOK_TIMEOUT_MARGIN_SECONDS = 30;

/** The profiles `install` writes a stdio server for. */
const INSTALLABLE = PROFILES.filter((p) => p.install !== undefined);

const OPTIONS_HELP = `  --scope user|project   The user's config (default) or this project's
  --profile PROFILE      peer (default: the topic tools), teacher, student, peerbus, or
                         chatbus (AgentChatBus's tools: threads, msg_post, msg_wait, ...)
  --agent NAME           The peer name (peerbus, required) or who asks/answers (teacher, student)
  --name NAME            The server's name in the client (default agent-bus, or agent-bus-PROFILE)
  --hooks                Also add hooks that tell the agent about unread messages (claude-code,
                         codex, gemini): a stop is held while something new is unread.
                         Installing again without it removes them
  --wait SECONDS         With --hooks: on call, a stop waits this long for a message first
  --trust                Pre-approve this server's tools (and only them) in the client, for
                         unattended runs (claude -p, gemini -p, codex exec)
  --standalone           The entry serves its agent in a process of its own, rather than
                         attaching to this host's resident bus of the database (the default on
                         SQLite: one process serves every agent, started by the first entry)
  --url                  The client attaches to the resident bus by URL (Streamable HTTP), with
                         no process of its own: http://127.0.0.1:PORT/mcp and the bus's token
                         (user scope only: the file then holds the token, and is made 0600).
                         Run \`agent-bus bus start\` to serve it. peer and chatbus profiles;
                         no --hooks (they find their agent through the client's process)
  --port N               With --url: the bus's port (default AGENT_BUS_RESIDENT_PORT or 8766)
  --dry-run              Show what would change; write nothing
  --json                 Print the result as JSON`;

const INSTALL_USAGE = `Usage: agent-bus install <${CLIENT_IDS.join("|")}> [options]

Add this server to a client's MCP config, keeping every other server in the file. The original
file is backed up beside it first.

${OPTIONS_HELP}`;

const UNINSTALL_USAGE = `Usage: agent-bus uninstall <${CLIENT_IDS.join("|")}> [options]

Remove this server from a client's MCP config, with the hooks and the pre-approval install wrote
(each file is backed up first).

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
export function defaultServerName(profile: Profile): string {
  return profile.install!.serverName;
}

interface Plan {
  client: ClientSpec;
  scope: Scope;
  path: string;
  name: string;
  dryRun: boolean;
  json: boolean;
  places: Places;
  /** The entry holds the bus's token (`--url`). */
  secret: boolean;
  /** Never printed: the token, shown as the file that keeps it. */
  token?: { value: string; file: string };
}

/** The options of `install` and `uninstall`. */
const OPTIONS = {
  scope: { type: "string" },
  profile: { type: "string" },
  agent: { type: "string" },
  name: { type: "string" },
  hooks: { type: "boolean" },
  wait: { type: "string" },
  trust: { type: "boolean" },
  standalone: { type: "boolean" },
  url: { type: "boolean" },
  port: { type: "string" },
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
  const chosen = choiceOption(values.profile, "profile", INSTALLABLE.map((p) => p.name), "peer");
  const profile = profileNamed(chosen)!;
  const client = CLIENTS[id];
  const name = values.name ?? defaultServerName(profile);
  const places = placesOf(ctx);
  const target: Plan = {
    client,
    scope,
    path: client.path(scope, places),
    name,
    dryRun: values["dry-run"] ?? false,
    json: values.json ?? false,
    places,
    secret: values.url ?? false,
  };
  const hooks = values.hooks ?? false;
  if ((hooks || values.trust) && !hookClient(id)) {
    throw new UsageError(
      `${client.title} has no ${
        hooks ? "hooks that can hold a stop" : "per-server pre-approval"
      } ` +
        "this command can write; --hooks and --trust work for claude-code, codex and gemini",
    );
  }
  if (values.wait !== undefined && !hooks) throw new UsageError("--wait goes with --hooks");
  const wait = values.wait === undefined ? 0 : Number(values.wait);
  if (!Number.isInteger(wait) || wait < 0 || wait > MAX_WAIT_SECONDS) {
    throw new UsageError(`--wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
  }
  const trust = values.trust ?? false;
  const standalone = values.standalone ?? false;
  const url = values.url ? urlChoice(profile, { ...values, scope }, ctx) : undefined;
  if (values.port !== undefined && !url) throw new UsageError("--port goes with --url");
  return { target, profile, agent: values.agent, hooks, wait, trust, standalone, url };
}

/**
 * With `--url`: the route of `profile` on the resident bus's port, or why
 * it cannot be installed so.
 */
function urlChoice(
  profile: Profile,
  values: { scope: Scope; hooks?: boolean; standalone?: boolean; agent?: string; port?: string },
  ctx: CliContext,
): { port: number; path: string } {
  const refuse = (why: string) => {
    throw new UsageError(`--url ${why}`);
  };
  if (values.scope !== "user") {
    refuse("installs in the user's config only: the entry holds the bus's token");
  }
  if (values.hooks) {
    refuse(
      "takes no --hooks: a hook finds its agent through the client's own server process, " +
        "which a client attached by URL does not start (install without --url for hooks)",
    );
  }
  if (values.standalone) refuse("attaches to the resident bus: it cannot be --standalone");
  if (values.agent !== undefined) refuse("takes no --agent: the agent names itself (topic_join)");
  // (The bus's `/mcp` serves the peer tools; a profile with a path of its own is there too.)
  const path = pathOf(profile, profileOf("peer"));
  if (path === undefined) refuse(`serves the peer and chatbus profiles, not ${profile.name}`);
  const port = intOption(values.port, "port", ctx.config.resident.port, 1, 65535);
  if (port === 0) {
    refuse("needs the port: AGENT_BUS_RESIDENT_PORT is 0 (any free one); pass --port N");
  }
  return { port, path: path! };
}

/** The server's arguments for `profile`: its own, then `--agent NAME` where it takes a name. */
function profileArgs(profile: Profile, agent: string | undefined): string[] {
  const args = [...profile.install!.args];
  if (profile.agent === "ignored") return args;
  if (agent === undefined) {
    if (profile.agent === "required") {
      throw new UsageError(`--profile ${profile.name} needs --agent NAME`);
    }
    return args;
  }
  return [...args, "--agent", cleanMailAgent(agent, "--agent")];
}

/** The edits around the MCP entry: hooks and pre-approval, added or (undefined) removed. */
interface Extras {
  /** The hook command for an event, or undefined to remove our hooks. */
  hookCommand: ((event: string) => string) | undefined;
  hookTimeout: number;
  trust: boolean;
}

function extraChanges(target: Plan, extras: Extras): FileChange[] {
  const client = hookClient(target.client.id);
  if (!client) return [];
  const path = hooksPath(client, target.scope, target.places);
  // The hooks and the pre-approval are what the flags say: installing without --hooks (or
  // uninstalling) removes ours, and nobody else's.
  const edits: JsonEdit[] = hookEdits(client, path, extras.hookCommand, extras.hookTimeout);
  if (client === "claude-code") edits.push(claudeTrustEdit(path, target.name, extras.trust));
  edits.push(dropIfEmpty(path, ["hooks"]), dropIfEmpty(path, ["permissions"]));
  return [{
    path,
    edits: edits.map((e) => (text: string) => updateJson(e.path, text, e.keyPath, e.update)),
  }];
}

async function apply(
  ctx: CliContext,
  target: Plan,
  entry: Record<string, unknown> | undefined,
  extras: Extras,
): Promise<number> {
  const { client, path, name } = target;
  const keys = { serversKey: client.serversKey, name };
  let previous: unknown;
  const entryChange: FileChange = {
    path,
    secret: target.secret,
    edits: [(text) => {
      const edited = client.format === "toml"
        ? editToml(path, text, keys, entry)
        : editJson(path, text, keys, entry, client.skeleton);
      previous = edited.previous;
      return edited;
    }],
  };
  const [main, ...others] = await applyFiles(
    [entryChange, ...extraChanges(target, extras)],
    target.dryRun,
  );
  if (target.json) {
    ctx.print.json({
      client: client.id,
      scope: target.scope,
      path,
      name,
      action: entry !== undefined ? "install" : "uninstall",
      changed: main!.changed,
      dry_run: target.dryRun,
      backup: main!.backup ?? null,
      entry: hidden(target, entry ?? null),
      previous: hidden(target, previous ?? null),
      also: others.map((o) => ({ path: o.path, changed: o.changed, backup: o.backup ?? null })),
    });
    return 0;
  }
  reportText(ctx, target, extras, { entry, previous, main: main!, others });
  return 0;
}

/** `value` as it may be printed: the bus's token replaced by where it is kept. */
function hidden(target: Plan, value: unknown): unknown {
  const token = target.token;
  if (token === undefined) return value;
  return JSON.parse(JSON.stringify(value).replaceAll(token.value, `<${token.file}>`));
}

/** What `install` changed (or, with `--dry-run`, would change), for a person. */
function reportText(
  ctx: CliContext,
  target: Plan,
  extras: Extras,
  { entry, previous, main, others }: {
    entry: Record<string, unknown> | undefined;
    previous: unknown;
    main: FileResult;
    others: FileResult[];
  },
): void {
  const { client, path, name } = target;
  const installing = entry !== undefined;
  const alsoChanged = others.filter((o) => o.changed);
  const where = `${client.title} (${target.scope} scope, ${path})`;
  if (!main.changed && alsoChanged.length === 0) {
    ctx.print.out(
      installing
        ? `"${name}" is already installed in ${where}; nothing changed.`
        : `"${name}" is not in ${where}; nothing changed.`,
    );
    return;
  }
  const done = installing ? (previous === undefined ? "added to" : "updated in") : "removed from";
  ctx.print.out(
    target.dryRun
      ? `Dry run, nothing written: "${name}" would be ${done} ${where}`
      : `"${name}" ${main.changed ? done : "unchanged in"} ${where}`,
  );
  if (entry) {
    // The file holds the database URL as given; what is printed never shows its password.
    const shown = JSON.stringify(hidden(target, entry), null, 2).replaceAll(
      ctx.config.dbPath,
      redactUrl(ctx.config.dbPath),
    );
    ctx.print.out(shown.split("\n").map((line) => `  ${line}`).join("\n"));
  }
  for (const other of alsoChanged) {
    const what = installing
      ? [extras.hookCommand && "hooks", extras.trust && "pre-approval"].filter(Boolean).join(
        " and ",
      )
      : "hooks and pre-approval";
    ctx.print.out(
      `${target.dryRun ? "Would update" : "Updated"} ${other.path} (${what || "settings"})`,
    );
  }
  for (const result of [main, ...others]) {
    if (result.backup) ctx.print.out(`Backup of the previous file: ${result.backup}`);
  }
  if (!target.dryRun) {
    ctx.print.err(`Restart ${client.title} (or start a new session) to load the change.`);
  }
}

/** The `install` command. */
export const installCommand: Command = defineCommand({
  usage: INSTALL_USAGE,
  options: OPTIONS,
  async run(parsed, ctx) {
    const { target, profile, agent, hooks, wait, trust, standalone, url } = plan(parsed, ctx);
    if (ctx.config.dbPath === ":memory:") {
      throw new UsageError(
        "AGENT_BUS_DB is :memory:; every agent would get its own empty bus. Point it at a file",
      );
    }
    if (url) return await installUrl(ctx, target, url, trust);
    const execPath = Deno.execPath();
    // From source, the entry names a Deno cache filled now, so it starts offline.
    const denoDir = runsFromSource(execPath)
      ? await prepareDenoCache(execPath, ctx.env.DENO_DIR)
      : undefined;
    const from = { execPath, dbPath: ctx.config.dbPath, env: ctx.env, denoDir };
    const launch = launchFor({
      ...from,
      args: profileArgs(profile, agent),
      role: standalone ? "standalone" : "entry",
    });
    if (/[\\/]_npx[\\/]/.test(launch.command)) {
      ctx.print.err(
        "Note: Deno runs from npx's cache here, so the entry breaks if that cache is cleared. " +
          "For a stable path, install Deno (npm install -g deno@2.9.6) and run install again.",
      );
    }
    const hook = hookClient(target.client.id);
    const hookCommandFor = hooks && hook
      ? (event: string) =>
        hookCommand(from, {
          client: hook,
          event,
          wait: kindOf(PROTOCOLS[hook], event) === "stop" ? wait : 0,
        })
      : undefined;
    const code = await apply(ctx, target, target.client.entry(launch, { trust }), {
      hookCommand: hookCommandFor,
      hookTimeout: wait + HOOK_TIMEOUT_MARGIN_SECONDS,
      trust,
    });
    if (hook === "codex" && hookCommandFor && trust && !target.dryRun) {
      await trustInCodex(ctx, Object.values(PROTOCOLS.codex.events).map(hookCommandFor));
    }
    return code;
  },
});

/**
 * `install --url`: the client attaches to the resident bus's URL with its
 * token (made now if there is none yet; a dry run makes none and shows
 * where it would be).
 */
async function installUrl(
  ctx: CliContext,
  target: Plan,
  { port, path }: { port: number; path: string },
  trust: boolean,
): Promise<number> {
  const address = residentAddress(ctx.config);
  if ("none" in address) {
    throw new UsageError(`--url: this database has no resident bus: ${address.none}`);
  }
  const file = tokenPath(address.socket);
  const value = target.dryRun
    ? await readToken(file) ?? "(made by the install)"
    : await residentToken(file);
  const remote = {
    url: `http://127.0.0.1:${port}${path}`,
    headers: { Authorization: `Bearer ${value}` },
  };
  const code = await apply(
    ctx,
    { ...target, token: { value, file } },
    target.client.urlEntry(remote, { trust }),
    { hookCommand: undefined, hookTimeout: 0, trust },
  );
  const status = await statusAt(address.socket);
  const serving = status?.ok ? status.bus.url ?? undefined : undefined;
  if (serving !== `http://127.0.0.1:${port}/mcp`) {
    ctx.print.err(
      serving === undefined
        ? `The bus does not serve that URL yet: run \`agent-bus bus start${
          port === ctx.config.resident.port ? "" : ` --port ${port}`
        }\` (it then runs until \`agent-bus bus stop\`).`
        : `Note: the bus serves ${serving}, not port ${port}: \`agent-bus bus stop\`, then \`agent-bus bus start --port ${port}\`.`,
    );
  }
  return code;
}

/**
 * Have Codex trust the hooks just written, through its own app-server, and
 * say whether it took; otherwise say what the user does.
 */
async function trustInCodex(ctx: CliContext, commands: string[]): Promise<void> {
  const outcome = await trustCodexHooks({ cwd: ctx.cwd, env: ctx.env, commands });
  if (!outcome.ok) {
    ctx.print.err(
      `✗ Codex was not asked to trust the hooks: ${outcome.reason}. ${CODEX_TRUST_BY_HAND}.`,
    );
    return;
  }
  const left = untrusted(outcome.hooks);
  if (outcome.hooks.length === commands.length && left.length === 0) {
    ctx.print.out(
      `Codex trusts the agent-bus hooks (${outcome.hooks.map((h) => h.event).join(", ")}), ` +
        `checked through its app-server (${outcome.version}).`,
    );
    return;
  }
  const missing = outcome.hooks.length < commands.length
    ? `Codex lists ${outcome.hooks.length} of the ${commands.length} agent-bus hooks`
    : `Codex still does not trust ${left.map((h) => h.event).join(", ")}`;
  ctx.print.err(`✗ ${missing}. ${CODEX_TRUST_BY_HAND}.`);
}

/** The `uninstall` command. */
export const uninstallCommand: Command = defineCommand({
  usage: UNINSTALL_USAGE,
  options: OPTIONS,
  async run(parsed, ctx) {
    const { target } = plan(parsed, ctx);
    return await apply(ctx, target, undefined, {
      hookCommand: undefined,
      hookTimeout: 0,
      trust: false,
    });
  },
});
