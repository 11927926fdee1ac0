/**
 * `agent-bus install <client> --hooks --trust [--wait S]`: the hook entries
 * and the pre-approval each client documents, written beside the user's own
 * hooks and rules (which stay), backed up, shown by `--dry-run`, removed by
 * `uninstall`; and an entry that starts offline from a HOME whose Deno cache
 * is empty.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse as parseToml } from "smol-toml";
import { cli } from "../_helpers/cli.ts";
import { denoCacheDir } from "../_helpers/run.ts";
import { runHook } from "../_helpers/hook.ts";
import { launchFor, residentSocket } from "../../lib/launch.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { launchOfHook, shellQuote } from "../../lib/cli/install/launch.ts";

type Json = Record<string, unknown>;
type Groups = { hooks: { command: string; timeout: number; type: string }[] }[];

const readJson = async (path: string): Promise<Json> => JSON.parse(await Deno.readTextFile(path));
const hooksOf = (settings: Json, event: string) =>
  ((settings.hooks as Record<string, Groups> | undefined)?.[event] ?? []).flatMap((g) => g.hooks);

/** A user's own Claude Code settings: a hook and a permission rule of theirs. */
const CLAUDE_SETTINGS = `{
  "model": "opus",
  "hooks": {
    "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]
  },
  "permissions": { "allow": ["Bash(ls:*)"] }
}
`;

Deno.test("install claude-code --hooks --trust writes Stop, UserPromptSubmit and SessionStart hooks and mcp__agent-bus beside the user's own; uninstall takes only ours away", async () => {
  await using tmp = await tmpDir();
  const home = `${tmp.path}/home`;
  const settingsPath = `${home}/.claude/settings.json`;
  await Deno.mkdir(`${home}/.claude`, { recursive: true });
  await Deno.writeTextFile(settingsPath, CLAUDE_SETTINGS);
  const db = `${tmp.path}/bus.sqlite`;
  const env = { HOME: home, AGENT_BUS_DB: db };

  const dry = await cli([
    "install",
    "claude-code",
    "--hooks",
    "--trust",
    "--wait",
    "30",
    "--dry-run",
  ], env);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /Would update .*settings\.json \(hooks and pre-approval\)/);
  assert.equal(await Deno.readTextFile(settingsPath), CLAUDE_SETTINGS);

  const installed = await cli(
    ["install", "claude-code", "--hooks", "--trust", "--wait", "30"],
    env,
  );
  assert.equal(installed.code, 0, installed.stderr);
  const settings = await readJson(settingsPath);
  assert.equal(settings.model, "opus");
  assert.deepEqual((settings.permissions as Json).allow, ["Bash(ls:*)", "mcp__agent-bus"]);
  const stops = hooksOf(settings, "Stop");
  assert.deepEqual(stops[0], { type: "command", command: "notify-send done" });
  assert.equal(stops.length, 2);
  assert.match(stops[1]!.command, / claude-code Stop --db \S+bus\.sqlite --wait 30$/);
  assert.equal(stops[1]!.timeout, 60);
  for (const event of ["UserPromptSubmit", "SessionStart"]) {
    const [ours] = hooksOf(settings, event);
    assert.match(ours!.command, new RegExp(` claude-code ${event} --db \\S+bus\\.sqlite$`));
  }
  assert.match(
    installed.stdout,
    /Backup of the previous file: .*settings\.json\.agent-bus-backup-/,
  );
  // The MCP entry itself is unchanged by --trust (Claude Code keeps approvals in settings).
  const entry = (await readJson(`${home}/.claude.json`)).mcpServers as Record<string, Json>;
  assert.equal(entry["agent-bus"]!.type, "stdio");

  const again = await cli(["install", "claude-code", "--hooks", "--trust", "--wait", "30"], env);
  assert.match(again.stdout, /already installed .*nothing changed/);

  // Installing without --hooks and --trust takes them away again; so does uninstall.
  await cli(["install", "claude-code", "--hooks"], env);
  assert.deepEqual(((await readJson(settingsPath)).permissions as Json).allow, ["Bash(ls:*)"]);
  const removed = await cli(["uninstall", "claude-code"], env);
  assert.equal(removed.code, 0, removed.stderr);
  const after = await readJson(settingsPath);
  assert.deepEqual(after, JSON.parse(CLAUDE_SETTINGS));
});

Deno.test("install gemini --hooks --trust: AfterAgent, BeforeAgent and SessionStart in the same settings.json (timeouts in ms), trust on the entry, one backup", async () => {
  await using tmp = await tmpDir();
  const home = `${tmp.path}/home`;
  const path = `${home}/.gemini/settings.json`;
  await Deno.mkdir(`${home}/.gemini`, { recursive: true });
  await Deno.writeTextFile(path, `{ "theme": "GitHub" }\n`);
  const env = { HOME: home, AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
  const installed = await cli(["install", "gemini", "--hooks", "--trust"], env);
  assert.equal(installed.code, 0, installed.stderr);
  const settings = await readJson(path);
  assert.equal(settings.theme, "GitHub");
  assert.equal((settings.mcpServers as Record<string, Json>)["agent-bus"]!.trust, true);
  for (const event of ["AfterAgent", "BeforeAgent", "SessionStart"]) {
    const [ours] = hooksOf(settings, event);
    assert.match(ours!.command, new RegExp(` gemini ${event} --db `));
    assert.equal(ours!.timeout, 30_000);
  }
  assert.equal(installed.stdout.match(/Backup of the previous file/g)?.length, 1);
  await cli(["uninstall", "gemini"], env);
  assert.deepEqual(await readJson(path), { theme: "GitHub", mcpServers: {} });
});

Deno.test("install codex --hooks --trust: hooks.json in CODEX_HOME, default_tools_approval_mode on the server; other clients refuse --hooks", async () => {
  await using tmp = await tmpDir();
  const codexHome = `${tmp.path}/codex`;
  const env = { HOME: tmp.path, CODEX_HOME: codexHome, AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
  const installed = await cli(["install", "codex", "--hooks", "--trust"], env);
  assert.equal(installed.code, 0, installed.stderr);
  const config = parseToml(await Deno.readTextFile(`${codexHome}/config.toml`)) as {
    mcp_servers: Record<string, Json>;
  };
  assert.equal(config.mcp_servers["agent-bus"]!.default_tools_approval_mode, "approve");
  const hooks = await readJson(`${codexHome}/hooks.json`);
  assert.match(hooksOf(hooks, "Stop")[0]!.command, / codex Stop --db /);
  await cli(["uninstall", "codex"], env);
  assert.deepEqual(await readJson(`${codexHome}/hooks.json`), {});

  for (const client of ["cursor", "opencode", "vscode"]) {
    const refused = await cli(["install", client, "--hooks"], env);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--hooks and --trust work for claude-code, codex and gemini/);
  }
});

Deno.test("an installed entry and its hooks start offline from a HOME with an empty Deno cache", async () => {
  await using tmp = await tmpDir();
  const home = `${tmp.path}/fresh-home`;
  await Deno.mkdir(home);
  const db = `${tmp.path}/bus.sqlite`;
  // No DENO_DIR: install finds the cache it runs from and names it in the entry.
  const installed = await cli(
    ["install", "claude-code", "--hooks", "--json"],
    { HOME: home, AGENT_BUS_DB: db, DENO_DIR: "" },
  );
  assert.equal(installed.code, 0, installed.stderr);
  const { entry } = JSON.parse(installed.stdout) as {
    entry: { command: string; args: string[]; env: Record<string, string> };
  };
  assert.equal(entry.env.DENO_DIR, await denoCacheDir());
  assert.equal(entry.env.HOME, home);
  assert.ok(entry.args.includes("--cached-only"), "never reaches for the network");

  // The client starts it with only the entry's environment.
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    env: { ...entry.env, PATH: Deno.env.get("PATH") ?? "" },
    stderr: "pipe",
  });
  const client = new Client({ name: "offline-test", version: "0" });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "sync"));
  } finally {
    await client.close();
  }
  const [stop] = hooksOf(await readJson(`${home}/.claude/settings.json`), "Stop");
  const sanitized = `env -i PATH="$PATH" sh -c ${JSON.stringify(stop!.command)}`;
  const result = await runHook(sanitized, { session_id: "x", cwd: tmp.path }, tmp.path);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.out, {});
  assert.equal(result.stderr, "");
});

Deno.test("a hook from source compiles its bundle whole; an entry and a server compile lazily", () => {
  const lazyOf = (role: "hook" | "entry" | "standalone" | "bus") =>
    !launchFor({
      execPath: Deno.execPath(),
      dbPath: "/home/u/bus.sqlite",
      args: [],
      env: { HOME: "/home/u" },
      role,
    }).args.includes("--v8-flags=--no-lazy");
  assert.equal(lazyOf("hook"), false);
  // (A session an entry serves itself loads the whole program: eagerly, 4 MB more.)
  for (const role of ["entry", "standalone", "bus"] as const) {
    assert.equal(lazyOf(role), true, role);
  }
});

Deno.test("for a PostgreSQL URL, a standalone entry may read ~/.pgpass but writes nowhere", () => {
  const launch = launchFor({
    execPath: Deno.execPath(),
    dbPath: "postgres://bus@db.example:5432/bus",
    args: [],
    env: { HOME: "/home/u" },
    role: "standalone",
  });
  assert.ok(
    launch.args.some((a) => a.startsWith("--allow-read=/home/u/.pgpass,")),
    launch.args.join(" "),
  );
  assert.ok(!launch.args.some((a) => a.startsWith("--allow-write")), launch.args.join(" "));
  assert.ok(launch.args.includes("--allow-net=127.0.0.1,localhost,db.example"));
});

Deno.test("for a PostgreSQL URL, an entry reaches its host's bus in ~/.agent_bus and writes only there", () => {
  const launch = launchFor({
    execPath: Deno.execPath(),
    dbPath: "postgres://bus:secret@db.example:5432/bus",
    args: [],
    env: { HOME: "/home/u" },
  });
  const socket = residentSocket("/home/u/.agent_bus", "postgres://bus:other@db.example:5432/bus");
  assert.match(socket, /^\/home\/u\/\.agent_bus\/agent-bus-[0-9a-f]{16}\.sock$/);
  assert.ok(
    launch.args.includes(`--allow-net=127.0.0.1,localhost,db.example,unix:${socket}`),
    `the socket is named by the URL without its password: ${launch.args.join(" ")}`,
  );
  assert.ok(launch.args.includes("--allow-write=/home/u/.agent_bus"), launch.args.join(" "));
  assert.ok(launch.args.includes(`--allow-run=${Deno.execPath()}`), "it may start the bus");
});

Deno.test("doctor runs the installed stop hook and names a missing hook or another database", async () => {
  await using tmp = await tmpDir();
  const home = `${tmp.path}/home`;
  const env = { HOME: home, AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
  assert.equal((await cli(["install", "gemini", "--hooks", "--wait", "5"], env)).code, 0);
  const healthy = await cli(["doctor"], env);
  assert.match(
    healthy.stdout,
    /✔ Hooks \(Gemini CLI\)\s+user \(.*settings\.json\): AfterAgent, BeforeAgent, SessionStart \(on call, 5 s\); the stop hook answered in \d+ ms/,
  );
  const elsewhere = await cli(["doctor"], { ...env, AGENT_BUS_DB: `${tmp.path}/other.sqlite` });
  assert.match(
    elsewhere.stdout,
    /⚠ Hooks \(Gemini CLI\).*the hooks read .*bus\.sqlite, not .*other\.sqlite/,
  );

  const path = `${home}/.gemini/settings.json`;
  const settings = await readJson(path);
  const hooks = settings.hooks as Record<string, Groups>;
  delete hooks.BeforeAgent;
  hooks.AfterAgent![0]!.hooks[0]!.command = hooks.AfterAgent![0]!.hooks[0]!.command.replace(
    /^(.*?)hook\.bundle\.js/,
    "$1missing-hook.js",
  );
  await Deno.writeTextFile(path, JSON.stringify(settings));
  const missing = await cli(["doctor"], env);
  assert.match(missing.stdout, /⚠ Hooks \(Gemini CLI\).*no BeforeAgent hook/);
  hooks.BeforeAgent = structuredClone(hooks.SessionStart!);
  hooks.BeforeAgent[0]!.hooks[0]!.command = hooks.BeforeAgent[0]!.hooks[0]!.command.replace(
    " SessionStart ",
    " BeforeAgent ",
  );
  await Deno.writeTextFile(path, JSON.stringify(settings));
  const broken = await cli(["doctor"], env);
  assert.equal(broken.code, 1, broken.stdout);
  assert.match(broken.stdout, /✘ Hooks \(Gemini CLI\).*the stop hook does not run/);
});

Deno.test("doctor warns of hooks that may not ask their database's resident bus, and says to install them again", async () => {
  await using tmp = await tmpDir();
  const home = `${tmp.path}/home`;
  const env = { HOME: home, AGENT_BUS_DB: `${tmp.path}/bus.sqlite` };
  assert.equal((await cli(["install", "gemini", "--hooks"], env)).code, 0);
  // As an earlier version wrote them: the socket every database of the directory once shared.
  const path = `${home}/.gemini/settings.json`;
  const written = await Deno.readTextFile(path);
  const older = written.replaceAll(/unix:[^,"' ]*\.sock/g, `unix:${tmp.path}/agent-bus.sock`);
  assert.notEqual(older, written);
  await Deno.writeTextFile(path, older);
  const doctor = await cli(["doctor"], env);
  assert.match(
    doctor.stdout,
    /⚠ Hooks \(Gemini CLI\)\s+user \(.*\): the hooks may not connect to the resident bus's socket .*agent-bus-[0-9a-f]{16}\.sock: they read the database themselves .*\n\s+fix: `agent-bus install gemini --hooks` again/,
  );
});

Deno.test("launchOfHook reads back the words hookCommand quoted", () => {
  const words = [
    "/opt/deno",
    "run",
    "--allow-net=unix:/a b/it's.sock",
    "/x/hook.bundle.js",
    "gemini",
  ];
  const command = ["DENO_DIR=/c d", "HOME=/h", ...words].map(shellQuote).join(" ");
  assert.deepEqual(launchOfHook(command), {
    command: "/opt/deno",
    args: words.slice(1),
    env: { DENO_DIR: "/c d", HOME: "/h" },
  });
});

Deno.test("what a launch may run, and the socket it reaches, are its role's own, not the serve task's", () => {
  const socket = residentSocket("/home/u", "/home/u/bus.sqlite");
  const expected = {
    entry: { runs: [`--allow-run=${Deno.execPath()}`], sockets: [`unix:${socket}`] },
    bus: { runs: ["--allow-run=ps"], sockets: [`unix:${socket}`] },
    hook: { runs: ["--allow-run=ps"], sockets: [`unix:${socket}`] },
    standalone: { runs: [], sockets: [] },
  };
  for (const [role, { runs, sockets }] of Object.entries(expected)) {
    const { args } = launchFor({
      execPath: Deno.execPath(),
      dbPath: "/home/u/bus.sqlite",
      args: [],
      env: { HOME: "/home/u" },
      role: role as keyof typeof expected,
    });
    assert.deepEqual(args.filter((arg) => arg.startsWith("--allow-run")), runs, role);
    const net = args.find((arg) => arg.startsWith("--allow-net="))!.split("=")[1]!.split(",");
    assert.deepEqual(net.filter((value) => value.startsWith("unix:")), sockets, role);
  }
});
