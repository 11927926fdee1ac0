/**
 * `agent-bus install` / `uninstall` for every client and scope, against
 * temp HOME and project directories whose configs already hold other
 * servers (and comments): the result parses in the client's format, the
 * rest of the file is intact, the original is backed up, and uninstall
 * puts things back.
 */

import assert from "node:assert/strict";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { cli } from "../_helpers/cli.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { ENTRY_PATH } from "../../lib/launch.ts";

interface Case {
  client: string;
  /** Config path relative to HOME (user) or the project (project). */
  user: string;
  project: string;
  format: "json" | "toml";
  /** The existing file, with another server and a comment. */
  existing: string;
  /** Key path of the servers map. */
  servers: string[];
  /** Key paths of settings that must survive: the other server's command, other settings. */
  keep: string[][];
}

const CASES: Case[] = [
  {
    client: "claude-code",
    user: ".claude.json",
    project: ".mcp.json",
    format: "json",
    existing:
      `{\n  "numStartups": 7,\n  "mcpServers": {\n    "other": { "type": "stdio", "command": "other-server", "args": [] }\n  }\n}\n`,
    servers: ["mcpServers"],
    keep: [["numStartups"], ["mcpServers", "other", "command"]],
  },
  {
    client: "codex",
    user: ".codex/config.toml",
    project: ".codex/config.toml",
    format: "toml",
    existing:
      `# my codex settings\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server"\nargs = ["--flag"]\n\n[profiles.fast]\nmodel = "o4-mini"\n`,
    servers: ["mcp_servers"],
    keep: [["model"], ["mcp_servers", "other", "command"], ["profiles", "fast", "model"]],
  },
  {
    client: "gemini",
    user: ".gemini/settings.json",
    project: ".gemini/settings.json",
    format: "json",
    existing:
      `{\n  "theme": "GitHub",\n  "mcpServers": { "other": { "command": "other-server" } }\n}\n`,
    servers: ["mcpServers"],
    keep: [["theme"], ["mcpServers", "other", "command"]],
  },
  {
    client: "cursor",
    user: ".cursor/mcp.json",
    project: ".cursor/mcp.json",
    format: "json",
    existing: `{ "mcpServers": { "other": { "command": "other-server", "args": ["x"] } } }`,
    servers: ["mcpServers"],
    keep: [["mcpServers", "other", "args"]],
  },
  {
    client: "opencode",
    user: ".config/opencode/opencode.json",
    project: "opencode.json",
    format: "json",
    existing:
      `{\n  // my opencode config\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight",\n  "mcp": {\n    "other": { "type": "local", "command": ["other-server"], "enabled": true },\n  },\n}\n`,
    servers: ["mcp"],
    keep: [["theme"], ["mcp", "other", "command"]],
  },
  {
    client: "vscode",
    user: ".config/Code/User/mcp.json",
    project: ".vscode/mcp.json",
    format: "json",
    existing:
      `{\n  // servers for this machine\n  "inputs": [],\n  "servers": {\n    "other": { "type": "stdio", "command": "other-server" }\n  }\n}\n`,
    servers: ["servers"],
    keep: [["inputs"], ["servers", "other", "command"]],
  },
];

function parse(format: "json" | "toml", text: string): Record<string, unknown> {
  return (format === "toml"
    ? parseToml(text)
    : parseJsonc(text, [], { allowTrailingComma: true })) as Record<string, unknown>;
}

function at(config: unknown, keys: string[]): unknown {
  for (const key of keys) config = (config as Record<string, unknown> | undefined)?.[key];
  return config;
}

function kept(c: Case, config: Record<string, unknown>): unknown[] {
  return c.keep.map((keys) => at(config, keys));
}

function serversOf(
  c: Case,
  config: Record<string, unknown>,
): Record<string, Record<string, unknown>> {
  let at: unknown = config;
  for (const key of c.servers) at = (at as Record<string, unknown>)[key];
  return at as Record<string, Record<string, unknown>>;
}

for (const c of CASES) {
  for (const scope of ["user", "project"] as const) {
    Deno.test(`install ${c.client} (${scope} scope) merges into an existing config, and uninstall reverses it`, async () => {
      await using tmp = await tmpDir();
      const home = `${tmp.path}/home`;
      const project = `${tmp.path}/project`;
      const file = scope === "user" ? `${home}/${c.user}` : `${project}/${c.project}`;
      await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
      await Deno.mkdir(project, { recursive: true });
      await Deno.writeTextFile(file, c.existing);
      const dbPath = `${tmp.path}/data/bus.sqlite`;
      const env = { HOME: home, AGENT_BUS_DB: dbPath, XDG_CONFIG_HOME: "", CODEX_HOME: "" };
      const run = (...args: string[]) => cli([...args, "--scope", scope], env, { cwd: project });

      const dry = await run("install", c.client, "--dry-run");
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /^Dry run, nothing written/);
      assert.equal(await Deno.readTextFile(file), c.existing);

      const installed = await run("install", c.client);
      assert.equal(installed.code, 0, installed.stderr);
      assert.match(
        installed.stdout,
        new RegExp(`"agent-bus" added to .*${file.replaceAll(".", "\\.")}`),
      );
      const text = await Deno.readTextFile(file);
      const config = parse(c.format, text);
      assert.deepEqual(
        kept(c, config),
        kept(c, parse(c.format, c.existing)),
        "the rest of the file is intact",
      );
      for (const comment of c.existing.match(/(\/\/|#) [^\n]+/g) ?? []) {
        assert.ok(text.includes(comment), `kept ${comment}`);
      }
      const ours = serversOf(c, config)["agent-bus"]!;
      const [command, ...args] = c.client === "opencode"
        ? ours.command as string[]
        : [ours.command as string, ...(ours.args as string[])];
      assert.equal(command, Deno.execPath());
      assert.ok(args.includes(ENTRY_PATH), "runs this checkout's entry (bundled)");
      assert.ok(
        args.includes(`--allow-write=${tmp.path}/data`),
        "with write access to the database directory only",
      );
      const env2 = (c.client === "opencode" ? ours.environment : ours.env) as Record<
        string,
        string
      >;
      assert.equal(env2.AGENT_BUS_DB, dbPath);
      const backups = (await Array.fromAsync(Deno.readDir(file.slice(0, file.lastIndexOf("/")))))
        .filter((e) => e.name.includes(".agent-bus-backup-"));
      assert.equal(backups.length, 1);
      assert.equal(
        await Deno.readTextFile(`${file.slice(0, file.lastIndexOf("/"))}/${backups[0]!.name}`),
        c.existing,
      );

      assert.match(
        (await run("install", c.client)).stdout,
        /already installed in .*; nothing changed/,
      );
      const teacher = await run("install", c.client, "--profile", "teacher", "--json");
      const teacherEntry = JSON.parse(teacher.stdout);
      assert.equal(teacherEntry.name, "agent-bus-teacher");
      assert.match(JSON.stringify(teacherEntry.entry), /"--role","teacher"/);

      assert.equal((await run("uninstall", c.client)).code, 0);
      assert.equal((await run("uninstall", c.client, "--profile", "teacher")).code, 0);
      const after = parse(c.format, await Deno.readTextFile(file));
      assert.deepEqual(Object.keys(serversOf(c, after)), ["other"]);
      assert.deepEqual(kept(c, after), kept(c, parse(c.format, c.existing)));
      assert.match((await run("uninstall", c.client)).stdout, /not in .*nothing changed/);
    });
  }
}

Deno.test("install writes a new config when there is none, and refuses to touch a broken one", async () => {
  await using tmp = await tmpDir();
  const env = { HOME: tmp.path, AGENT_BUS_DB: `${tmp.path}/bus.sqlite`, XDG_CONFIG_HOME: "" };
  const fresh = await cli(["install", "opencode"], env);
  assert.equal(fresh.code, 0, fresh.stderr);
  const created = JSON.parse(await Deno.readTextFile(`${tmp.path}/.config/opencode/opencode.json`));
  assert.equal(created.$schema, "https://opencode.ai/config.json");
  assert.equal(created.mcp["agent-bus"].type, "local");

  await Deno.writeTextFile(`${tmp.path}/.claude.json`, `{"mcpServers": {`);
  const broken = await cli(["install", "claude-code"], env);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /is not valid .*Nothing was changed/);
  assert.equal(await Deno.readTextFile(`${tmp.path}/.claude.json`), `{"mcpServers": {`);

  assert.equal((await cli(["install", "emacs"], env)).code, 2);
  assert.equal(
    (await cli(["install", "codex", "--profile", "peerbus"], env)).code,
    2,
    "peerbus needs --agent",
  );
  const peerbus = JSON.parse(
    (await cli(["install", "codex", "--profile", "peerbus", "--agent", "cx", "--json"], env))
      .stdout,
  );
  assert.deepEqual(peerbus.entry.args.slice(-4), ["--profile", "peerbus", "--agent", "cx"]);
  const chatbus = JSON.parse(
    (await cli(["install", "codex", "--profile", "chatbus", "--json"], env)).stdout,
  );
  assert.equal(chatbus.name, "agent-bus-chatbus");
  assert.deepEqual(chatbus.entry.args.slice(-2), ["--profile", "chatbus"]);
  // Codex waits for a required server before the first turn, given a minute to start.
  assert.equal(chatbus.entry.required, true);
  assert.equal(chatbus.entry.startup_timeout_sec, 60);
  assert.equal((await cli(["install", "codex"], { ...env, AGENT_BUS_DB: ":memory:" })).code, 2);
});

/** Each client's form of a server attached by URL: where it keeps the URL and the headers. */
const URL_FORMS: Record<string, { url: string; headers: string; extra: Record<string, unknown> }> =
  {
    "claude-code": { url: "url", headers: "headers", extra: { type: "http" } },
    codex: { url: "url", headers: "http_headers", extra: {} },
    gemini: { url: "httpUrl", headers: "headers", extra: {} },
    cursor: { url: "url", headers: "headers", extra: {} },
    opencode: { url: "url", headers: "headers", extra: { type: "remote", enabled: true } },
    vscode: { url: "url", headers: "headers", extra: { type: "http" } },
  };

Deno.test("install --url writes each client's form of the bus's URL with its token, in a file only its owner reads", async () => {
  await using tmp = await tmpDir();
  const env = {
    HOME: tmp.path,
    XDG_CONFIG_HOME: "",
    AGENT_BUS_DB: `${tmp.path}/data/bus.sqlite`,
  };
  for (const c of CASES) {
    const path = `${tmp.path}/${c.user}`;
    await Deno.mkdir(path.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(path, c.existing, { mode: 0o644 });
    const result = await cli(["install", c.client, "--url", "--port", "9123"], env);
    assert.equal(result.code, 0, result.stderr);
    const token = (await Deno.readTextFile(`${tmp.path}/data/agent-bus.token`)).trim();
    assert.ok(!result.stdout.includes(token), "the token is never printed");
    assert.match(result.stderr, /run `agent-bus bus start --port 9123`/);
    const config = parse(c.format, await Deno.readTextFile(path));
    const form = URL_FORMS[c.client]!;
    // (Through JSON: the TOML parser's objects have no prototype.)
    const entry = JSON.parse(JSON.stringify(serversOf(c, config)["agent-bus"]));
    assert.deepEqual(entry, {
      ...form.extra,
      [form.url]: "http://127.0.0.1:9123/mcp",
      [form.headers]: { Authorization: `Bearer ${token}` },
    }, c.client);
    assert.deepEqual(kept(c, config), kept(c, parse(c.format, c.existing)), c.client);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600, `${c.client}: holds the token`);
  }
  // The chatbus profile is served at its own path.
  const chatbus = await cli(["install", "cursor", "--url", "--profile", "chatbus", "--json"], env);
  assert.equal(chatbus.code, 0, chatbus.stderr);
  const shown = JSON.parse(chatbus.stdout) as { entry: { url: string; headers: unknown } };
  assert.equal(shown.entry.url, "http://127.0.0.1:8766/chatbus/mcp");
  assert.deepEqual(shown.entry.headers, {
    Authorization: `Bearer <${tmp.path}/data/agent-bus.token>`,
  });

  for (
    const [args, why] of [
      [["--hooks"], /takes no --hooks/],
      [["--scope", "project"], /user's config only/],
      [["--profile", "teacher"], /serves the peer and chatbus profiles, not teacher/],
      [["--standalone"], /cannot be --standalone/],
    ] as const
  ) {
    const refused = await cli(["install", "claude-code", "--url", ...args], env);
    assert.equal(refused.code, 2, args.join(" "));
    assert.match(refused.stderr, why);
  }
  const anyPort = await cli(["install", "claude-code", "--url"], {
    ...env,
    AGENT_BUS_RESIDENT_PORT: "0",
  });
  assert.equal(anyPort.code, 2);
  assert.match(anyPort.stderr, /--url needs the port/);
  const portAlone = await cli(["install", "claude-code", "--port", "9123"], env);
  assert.match(portAlone.stderr, /--port goes with --url/);
});
