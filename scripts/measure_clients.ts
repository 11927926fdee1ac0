/**
 * Measure how real clients treat our results:
 * `deno run -A scripts/measure_clients.ts CLIENT size|timeout [SIZES] [UNIT]`
 * with CLIENT one of `claude`, `codex` (from `CODEX_BIN`, else the PATH) or
 * `gemini`.
 *
 * The real client runs headless (`claude -p`, `codex exec`, `gemini -p`)
 * against a scripted fake model on loopback (tests/_helpers/fake_*.ts) and
 * calls our tools through its own MCP client, so what it does with a large
 * result or a long wait is observed, not assumed. `size` seeds one message
 * of each size and has the model `sync` it: whole, cut, or replaced;
 * `timeout` has it `sync` with a long wait, with and without the client's
 * tool timeout. Prints one line per case. Used to choose the default result
 * budget and to write the client table of docs/CONNECTING.md.
 *
 * @module
 */

import { createTopic } from "../lib/bus/topics.ts";
import { openTestBus, seedTopic } from "../tests/_helpers/bus.ts";
import { installClients } from "../tests/_helpers/clients.ts";
import {
  type FakeModel,
  type ScriptedCall,
  type SeenResult,
  startFakeAnthropic,
} from "../tests/_helpers/fake_anthropic.ts";
import { startFakeGemini } from "../tests/_helpers/fake_gemini.ts";
import { startFakeOpenAI } from "../tests/_helpers/fake_openai.ts";
import { serverCommand } from "../tests/_helpers/peer.ts";

/** One result line on stdout. */
function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

const clients = await installClients();
if (clients.unavailable) throw new Error(clients.unavailable);
const [clientName = "claude", what = "size", sizeList, unitArg] = Deno.args;

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
  const output = await runOffline(clients.bin("claude"), [
    "-p",
    "Use the agent-bus tools.",
    "--mcp-config",
    `${dir}/mcp.json`,
    "--strict-mcp-config",
    "--allowedTools",
    "mcp__agent-bus",
  ], {
    cwd: dir,
    env: {
      HOME: `${dir}/home`,
      PATH: Deno.env.get("PATH") ?? "",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "sk-test",
      ...env,
    },
  });
  const results = timedResults(model);
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
  await runOffline(CODEX, ["exec", "--skip-git-repo-check", "Use the agent-bus tools."], {
    cwd: dir,
    env: {
      HOME: dir,
      CODEX_HOME: `${dir}/codex`,
      PATH: Deno.env.get("PATH") ?? "",
      FAKE_KEY: "x",
    },
  });
  // Codex reports a failed call in the output text.
  const results = timedResults(model, (r) => /timed out|error/i.test(r.text.slice(0, 200)));
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
  // An explicit model: "auto" first asks a router model that this fake does not play.
  await runOffline(clients.bin("gemini"), [
    "-m",
    "gemini-2.5-flash",
    "-p",
    "Use the agent-bus tools.",
  ], {
    cwd: dir,
    env: {
      HOME: `${dir}/home`,
      PATH: Deno.env.get("PATH") ?? "",
      DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
      GEMINI_API_KEY: "x",
      GOOGLE_GEMINI_BASE_URL: model.url,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    },
  });
  // Gemini CLI answers under its own ids: results follow the calls in order.
  const results = timedResults(model, undefined, [...model.calledAt.values()]);
  await Deno.remove(dir, { recursive: true });
  return { results };
}

/** Run a client with only `env` (no inherited environment), output captured. */
function runOffline(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Deno.CommandOutput> {
  return new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/** Each tool result with how long after its call it came back. */
function timedResults(
  model: FakeModel,
  isError: (result: SeenResult) => boolean = (r) => r.isError,
  callTimes?: number[],
): { text: string; isError: boolean; ms: number }[] {
  return model.results.map((r, i) => ({
    text: r.text,
    isError: isError(r),
    ms: r.at - ((callTimes ? callTimes[i] : model.calledAt.get(r.toolUseId)) ?? r.at),
  }));
}

async function topicWith(dbPath: string, bodies: string[]): Promise<string> {
  await using bus = openTestBus(dbPath);
  if (bodies.length === 0) {
    return (await createTopic(bus, { name: "t", mode: "new" })).topic.topic_id;
  }
  return await seedTopic(bus, "t", bodies);
}

/** How one client is driven: its runner, its name for a tool, and its timeout settings. */
interface ClientUnderTest {
  run(
    dbPath: string,
    script: ScriptedCall[],
    setting?: string,
  ): Promise<{ results: { text: string; isError: boolean; ms: number }[] }>;
  tool(name: string): string;
  /** Long waits to try, each with the client setting (if any) that bounds a tool call. */
  waits: [seconds: number, setting: string | undefined][];
}

const CLIENTS: Record<string, ClientUnderTest> = {
  claude: {
    run: (dbPath, script, setting) =>
      runClaude(dbPath, script, setting ? { MCP_TOOL_TIMEOUT: setting } : {}),
    tool: (name) => `mcp__agent-bus__${name}`,
    waits: [[75, undefined], [20, "8000"], [30, "15000"]],
  },
  codex: {
    run: (dbPath, script, setting) =>
      runCodex(dbPath, script, setting ? `tool_timeout_sec = ${setting}` : ""),
    tool: (name) => `mcp__agent_bus/${name}`,
    waits: [[75, undefined], [20, "8"]],
  },
  gemini: {
    run: (dbPath, script, setting) =>
      runGemini(dbPath, script, setting ? { timeout: Number(setting) } : {}),
    tool: (name) => `mcp_agent-bus_${name}`,
    waits: [[75, undefined], [20, "8000"]],
  },
};

/** Join a topic as the client, then `sync` it with `wait` seconds; the sync's result. */
async function joinAndSync(
  client: ClientUnderTest,
  dbPath: string,
  topicId: string,
  options: { wait: number; setting?: string | undefined },
) {
  const { results } = await client.run(dbPath, [
    { name: client.tool("topic_join"), input: { agent_name: clientName, topic_id: topicId } },
    { name: client.tool("sync"), input: { topic_id: topicId, wait_seconds: options.wait } },
  ], options.setting);
  return results[1];
}

const client = CLIENTS[clientName];
if (!client) throw new Error(`CLIENT must be one of ${Object.keys(CLIENTS).join(", ")}`);

if (what === "size") {
  // SIZES: comma-separated character counts; UNIT: the repeated character (default "x").
  const sizes = (sizeList ?? "10000,30000,48000,60000").split(",").map(Number);
  for (const chars of sizes) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const body = (unitArg ?? "x").repeat(chars);
    const result = await joinAndSync(client, dbPath, await topicWith(dbPath, [body]), { wait: 0 });
    const got = result?.text ?? "(no result)";
    const bytes = new TextEncoder().encode(got).length;
    say(
      `${clientName}, body ${chars} × ${JSON.stringify(unitArg ?? "x")}: result ${got.length} ` +
        `chars / ${bytes} bytes -> ` +
        (got.includes(body) ? "whole" : `cut or replaced: ${JSON.stringify(cutNote(got))}`),
    );
    await Deno.remove(dir, { recursive: true });
  }
}

if (what === "timeout") {
  for (const [wait, setting] of client.waits) {
    const dir = await Deno.makeTempDir();
    const dbPath = `${dir}/bus.sqlite`;
    const result = await joinAndSync(client, dbPath, await topicWith(dbPath, []), {
      wait,
      setting,
    });
    say(
      `${clientName}, wait_seconds=${wait}, timeout setting ${setting ?? "unset"}: ` +
        (result
          ? `after ${(result.ms / 1000).toFixed(1)} s: ${result.text.slice(0, 160)}`
          : "no result"),
    );
    await Deno.remove(dir, { recursive: true });
  }
}

/** The part of a cut output around where it was cut. */
function cutNote(text: string): string {
  const at = text.search(/…|truncated|omitted|persisted-output/);
  return at === -1 ? text.slice(-120) : text.slice(Math.max(0, at - 20), at + 120);
}
