/**
 * Measure how real clients treat our results: `deno run -A scripts/measure_clients.ts [size|timeout]`.
 *
 * Claude Code runs headless (`claude -p`) against a scripted fake model on
 * loopback (tests/_helpers/fake_anthropic.ts) and calls our tools through
 * its MCP client, so what it does with a large result or a long wait is
 * observed, not assumed. Prints one line per case. Used to choose the
 * default result budget and to write the README's client table.
 *
 * @module
 */

import { createTopic } from "../lib/bus/topics.ts";
import { openTestBus, seedTopic } from "../tests/_helpers/bus.ts";
import { installClients } from "../tests/_helpers/clients.ts";
import { type ScriptedCall, startFakeAnthropic } from "../tests/_helpers/fake_anthropic.ts";
import { startFakeGemini } from "../tests/_helpers/fake_gemini.ts";
import { startFakeOpenAI } from "../tests/_helpers/fake_openai.ts";
import { serverCommand } from "../tests/_helpers/peer.ts";

/** One result line on stdout. */
function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

const clients = await installClients();
if (clients.unavailable) throw new Error(clients.unavailable);
const what = Deno.args[0] ?? "size";

async function runClaude(
  dbPath: string,
  script: ScriptedCall[],
  env: Record<string, string> = {},
): Promise<{ results: { text: string; isError: boolean; ms: number }[]; stdout: string }> {
  const dir = await Deno.makeTempDir({ prefix: "measure-claude-" });
  await using model = startFakeAnthropic(script);
  const [command, ...args] = serverCommand(dbPath);
  await Deno.writeTextFile(
    `${dir}/mcp.json`,
    JSON.stringify({
      mcpServers: { "agent-bus": { command, args, env: { AGENT_BUS_DB: dbPath } } },
    }),
  );
  await Deno.mkdir(`${dir}/home`);
  const output = await new Deno.Command(clients.bin("claude"), {
    args: [
      "-p",
      "Use the agent-bus tools.",
      "--mcp-config",
      `${dir}/mcp.json`,
      "--strict-mcp-config",
      "--allowedTools",
      "mcp__agent-bus",
    ],
    cwd: dir,
    env: {
      HOME: `${dir}/home`,
      PATH: Deno.env.get("PATH") ?? "",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "sk-test",
      ...env,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const results = model.results.map((r) => ({
    text: r.text,
    isError: r.isError,
    ms: r.at - (model.calledAt.get(r.toolUseId) ?? r.at),
  }));
  await Deno.remove(dir, { recursive: true });
  return { results, stdout: new TextDecoder().decode(output.stdout) };
}

/** Where a Codex binary is: CODEX_BIN, or `codex` on the PATH. */
const CODEX = Deno.env.get("CODEX_BIN") ?? "codex";

async function runCodex(
  dbPath: string,
  script: ScriptedCall[],
  serverToml = "",
): Promise<{ results: { text: string; isError: boolean; ms: number }[] }> {
  const dir = await Deno.makeTempDir({ prefix: "measure-codex-" });
  await using model = startFakeOpenAI(script);
  const [command, ...args] = serverCommand(dbPath);
  const home = Deno.env.get("HOME") ?? "/root";
  await Deno.mkdir(`${dir}/codex`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/codex/config.toml`,
    [
      `model = "gpt-fake"`,
      `model_provider = "fake"`,
      Deno.env.get("CODEX_TOP_TOML") ?? "",
      `[model_providers.fake]`,
      `name = "fake"`,
      `base_url = "${model.url}/v1"`,
      `wire_api = "responses"`,
      `env_key = "FAKE_KEY"`,
      `[mcp_servers.agent-bus]`,
      `command = ${JSON.stringify(command)}`,
      `args = ${JSON.stringify(args)}`,
      `env = { AGENT_BUS_DB = ${JSON.stringify(dbPath)}, HOME = ${JSON.stringify(home)} }`,
      // Unattended: Codex asks before every tool that is not read-only otherwise.
      `default_tools_approval_mode = "approve"`,
      serverToml,
    ].join("\n"),
  );
  await new Deno.Command(CODEX, {
    args: ["exec", "--skip-git-repo-check", "Use the agent-bus tools."],
    cwd: dir,
    env: {
      HOME: dir,
      CODEX_HOME: `${dir}/codex`,
      PATH: Deno.env.get("PATH") ?? "",
      FAKE_KEY: "x",
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const results = model.results.map((r) => ({
    text: r.text,
    isError: /timed out|error/i.test(r.text.slice(0, 200)),
    ms: r.at - (model.calledAt.get(r.toolUseId) ?? r.at),
  }));
  await Deno.remove(dir, { recursive: true });
  return { results };
}

async function runGemini(
  dbPath: string,
  script: ScriptedCall[],
  serverExtra: Record<string, unknown> = {},
): Promise<{ results: { text: string; isError: boolean; ms: number }[] }> {
  const dir = await Deno.makeTempDir({ prefix: "measure-gemini-" });
  await using model = startFakeGemini(script);
  const [command, ...args] = serverCommand(dbPath);
  await Deno.mkdir(`${dir}/home/.gemini`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/home/.gemini/settings.json`,
    JSON.stringify({
      mcpServers: {
        "agent-bus": { command, args, env: { AGENT_BUS_DB: dbPath }, trust: true, ...serverExtra },
      },
      security: { auth: { selectedType: "gemini-api-key" } },
    }),
  );
  await new Deno.Command(clients.bin("gemini"), {
    // An explicit model: "auto" first asks a router model that this fake does not play.
    args: ["-m", "gemini-2.5-flash", "-p", "Use the agent-bus tools."],
    cwd: dir,
    env: {
      HOME: `${dir}/home`,
      PATH: Deno.env.get("PATH") ?? "",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      GEMINI_API_KEY: "x",
      GOOGLE_GEMINI_BASE_URL: model.url,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const order = [...model.calledAt.values()];
  const results = model.results.map((r, i) => ({
    text: r.text,
    isError: r.isError,
    ms: r.at - (order[i] ?? r.at),
  }));
  await Deno.remove(dir, { recursive: true });
  return { results };
}

async function topicWith(dbPath: string, bodies: string[]): Promise<string> {
  await using bus = openTestBus(dbPath);
  if (bodies.length === 0) {
    return (await createTopic(bus, { name: "t", mode: "new" })).topic.topic_id;
  }
  return await seedTopic(bus, "t", bodies);
}

if (what === "size") {
  // deno run -A scripts/measure_clients.ts size [CHARS,CHARS,...] [ascii]
  const units: [string, string][] = [["x", "ASCII"], ["€", "3-byte"]];
  const sizes = (Deno.args[1] ?? "18000,30000,36000,39000,42000,48000,60000").split(",");
  for (const [unit, label] of units.slice(0, Deno.args[2] === "ascii" ? 1 : 2)) {
    for (const chars of sizes.map(Number)) {
      const dir = await Deno.makeTempDir();
      const dbPath = `${dir}/bus.sqlite`;
      const body = unit.repeat(chars);
      const topicId = await topicWith(dbPath, [body]);
      const { results } = await runClaude(dbPath, [
        { name: "mcp__agent-bus__topic_join", input: { agent_name: "claude", topic_id: topicId } },
        { name: "mcp__agent-bus__sync", input: { topic_id: topicId, wait_seconds: 0 } },
      ]);
      const got = results[1]?.text ?? "(no result)";
      const inline = got.includes(body);
      const bytes = new TextEncoder().encode(got).length;
      say(
        `${label} body ${chars} chars: result ${got.length} chars / ${bytes} bytes -> ` +
          (inline ? "inline" : `replaced: ${JSON.stringify(got.slice(0, 160))}`),
      );
      await Deno.remove(dir, { recursive: true });
    }
  }
}

if (what === "timeout") {
  for (
    const [wait, env] of (Deno.args[1] === "progress"
      ? [[30, { MCP_TOOL_TIMEOUT: "15000" }]]
      : [[75, {}], [20, { MCP_TOOL_TIMEOUT: "8000" }], [30, { MCP_TOOL_TIMEOUT: "15000" }]]) as [
        number,
        Record<string, string>,
      ][]
  ) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const topicId = await topicWith(dbPath, []);
    const { results } = await runClaude(dbPath, [
      { name: "mcp__agent-bus__topic_join", input: { agent_name: "claude", topic_id: topicId } },
      { name: "mcp__agent-bus__sync", input: { topic_id: topicId, wait_seconds: wait } },
    ], env);
    const r = results[1];
    say(
      `wait_seconds=${wait} ${JSON.stringify(env)}: ` +
        (r
          ? `after ${(r.ms / 1000).toFixed(1)} s, error=${r.isError}: ${r.text.slice(0, 200)}`
          : "no result"),
    );
    await Deno.remove(dir, { recursive: true });
  }
}

/** The part of a cut output around where it was cut. */
function cutNote(text: string): string {
  const at = text.search(/[^x€]…|truncated|omitted/);
  return at === -1 ? text.slice(-120) : text.slice(Math.max(0, at - 20), at + 120);
}

if (what === "codex-size") {
  for (const chars of (Deno.args[1] ?? "10000,30000,60000").split(",").map(Number)) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const body = (Deno.args[2] ?? "x").repeat(chars);
    const topicId = await topicWith(dbPath, [body]);
    const { results } = await runCodex(dbPath, [
      { name: "mcp__agent_bus/topic_join", input: { agent_name: "codex", topic_id: topicId } },
      { name: "mcp__agent_bus/sync", input: { topic_id: topicId, wait_seconds: 0 } },
    ]);
    const got = results[1]?.text ?? "(no result)";
    say(
      `Codex, body ${chars} chars: output ${got.length} chars -> ` +
        (got.includes(body) ? "whole" : `cut: ${JSON.stringify(cutNote(got))}`),
    );
    await Deno.remove(dir, { recursive: true });
  }
}

if (what === "codex-timeout") {
  const cases: [number, string][] = [[75, ""], [20, "tool_timeout_sec = 8"]];
  for (const [wait, toml] of cases) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const topicId = await topicWith(dbPath, []);
    const { results } = await runCodex(dbPath, [
      { name: "mcp__agent_bus/topic_join", input: { agent_name: "codex", topic_id: topicId } },
      { name: "mcp__agent_bus/sync", input: { topic_id: topicId, wait_seconds: wait } },
    ], toml);
    const r = results[1];
    say(
      `Codex wait_seconds=${wait} ${toml || "(no timeout set)"}: ` +
        (r ? `after ${(r.ms / 1000).toFixed(1)} s: ${r.text.slice(0, 160)}` : "no result"),
    );
    await Deno.remove(dir, { recursive: true });
  }
}

if (what === "gemini-size") {
  for (const chars of (Deno.args[1] ?? "10000,60000").split(",").map(Number)) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const body = (Deno.args[2] ?? "x").repeat(chars);
    const topicId = await topicWith(dbPath, [body]);
    const { results } = await runGemini(dbPath, [
      { name: "mcp_agent-bus_topic_join", input: { agent_name: "gemini", topic_id: topicId } },
      { name: "mcp_agent-bus_sync", input: { topic_id: topicId, wait_seconds: 0 } },
    ]);
    const got = results[1]?.text ?? "(no result)";
    say(
      `Gemini CLI, body ${chars} chars: output ${got.length} chars -> ` +
        (got.includes(body) ? "whole" : `cut: ${JSON.stringify(cutNote(got))}`),
    );
    await Deno.remove(dir, { recursive: true });
  }
}

if (what === "gemini-timeout") {
  const cases: [number, Record<string, unknown>][] = [[75, {}], [20, { timeout: 8000 }]];
  for (const [wait, extra] of cases) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const topicId = await topicWith(dbPath, []);
    const { results } = await runGemini(dbPath, [
      { name: "mcp_agent-bus_topic_join", input: { agent_name: "gemini", topic_id: topicId } },
      { name: "mcp_agent-bus_sync", input: { topic_id: topicId, wait_seconds: wait } },
    ], extra);
    const r = results[1];
    say(
      `Gemini CLI wait_seconds=${wait} ${JSON.stringify(extra)}: ` +
        (r ? `after ${(r.ms / 1000).toFixed(1)} s: ${r.text.slice(0, 160)}` : "no result"),
    );
    await Deno.remove(dir, { recursive: true });
  }
}
