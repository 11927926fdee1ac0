/**
 * The hooks in real clients, offline: Claude Code (`claude -p`) and Gemini
 * CLI (`gemini -p`), configured by `agent-bus install <client> --hooks
 * --trust`, with their model replaced by a scripted fake on loopback. The
 * fake model joins a topic through the client's MCP tools and ends its
 * turn; just then another process posts a message to it; the client's stop
 * hook blocks, and the model's next request carries the hook's reason with
 * the message. On call (`--wait`), a message posted while the stop hook
 * waits brings the next request before the wait ends. Codex (`codex exec`, no
 * bypass flag) runs only hooks its user trusted: `install --trust` has Codex
 * trust them through its own app-server, and its Stop hook then holds the
 * turn like the others.
 *
 * How long each client waits for our server to answer `initialize` (a busy
 * machine has taken seconds): Claude Code up to `MCP_TIMEOUT` (set to
 * {@linkcode SERVER_START_S}), its scripted model calling
 * `WaitForMcpServers` until then as a real one told to wait for its tools
 * does; Codex up to `startup_timeout_sec` (60 s, written by `install`,
 * which makes the server `required`: Codex waits for it before the first
 * turn); Gemini CLI discovers its MCP servers before the first turn.
 */

import assert from "node:assert/strict";
import { installClients } from "../_helpers/clients.ts";
import { cli } from "../_helpers/cli.ts";
import { denoCacheDir } from "../_helpers/run.ts";
import { readTomlConfig } from "../../lib/cli/install/config_edit.ts";
import { startFakeAnthropic } from "../_helpers/fake_anthropic.ts";
import { startFakeGemini } from "../_helpers/fake_gemini.ts";
import { startFakeOpenAI } from "../_helpers/fake_openai.ts";
import type { FakeModel } from "../_helpers/fake_model.ts";
import { run } from "../_helpers/run.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const clients = await installClients();
const skip = clients.unavailable ? ` (SKIPPED: ${clients.unavailable})` : "";

/** Where one run lives: a HOME, a project, a database. */
async function setUp(path: string) {
  const home = `${path}/home`;
  const project = `${path}/project`;
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(project, { recursive: true });
  const db = `${path}/bus.sqlite`;
  const created = await cli(["topics", "create", "release-1.4"], { AGENT_BUS_DB: db });
  assert.equal(created.code, 0, created.stderr);
  return { home, project, db };
}

async function install(home: string, db: string, client: string, ...flags: string[]) {
  const installed = await cli(["install", client, "--hooks", "--trust", ...flags], {
    HOME: home,
    AGENT_BUS_DB: db,
  });
  assert.equal(installed.code, 0, installed.stderr);
}

/** Post as codex from another process. */
async function post(db: string, text: string, topic = "release-1.4") {
  const posted = await cli(["post", topic, text, "--as", "codex"], { AGENT_BUS_DB: db });
  assert.equal(posted.code, 0, posted.stderr);
  return performance.now();
}

/** A model's `beforeText` that posts `text` as codex the first time the model answers in text. */
function postOnce(db: string, text: string) {
  let posted = false;
  return async () => {
    if (posted) return;
    posted = true;
    await post(db, text);
  };
}

/** Index of the first request whose body mentions `text`, or -1. */
const requestWith = (model: FakeModel, text: string) =>
  model.requests.findIndex((body) => JSON.stringify(body).includes(text));

const JOIN = { name: "release-1.4", agent_name: "claude" };

/**
 * An installed entry's command, started as a machine so busy would start
 * it: `initialize` is answered only after `SLOW_START_S` seconds.
 */
function slowStart(entry: { command: string; args: string[] }) {
  return {
    command: "sh",
    args: ["-c", `sleep ${SLOW_START_S}; exec "$0" "$@"`, entry.command, ...entry.args],
  };
}
const SLOW_START_S = 4;
/** The longest a client here waits for our server to start. */
const SERVER_START_S = 60;
/** How long an on-call stop hook waits (`install --wait`). */
const ON_CALL_WAIT_S = 8;

async function runClaude(home: string, project: string, model: FakeModel) {
  return await run(clients.bin("claude"), [
    "-p",
    "Join release-1.4 and wait for work.",
    "--output-format",
    "json",
  ], {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "",
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "sk-ant-fake",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    MCP_TIMEOUT: String(SERVER_START_S * 1000),
    DENO_DIR: await denoCacheDir(),
  }, { cwd: project });
}

/** Gemini CLI set to an API key (the fake's), with our hooks installed. */
async function installGemini(home: string, db: string, ...flags: string[]) {
  await Deno.mkdir(`${home}/.gemini`);
  await Deno.writeTextFile(
    `${home}/.gemini/settings.json`,
    JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }),
  );
  await install(home, db, "gemini", ...flags);
}

async function runGemini(home: string, project: string, model: FakeModel) {
  return await run(clients.bin("gemini"), [
    "-m",
    "gemini-2.5-flash",
    "-p",
    "Join release-1.4 and wait for work.",
  ], {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "",
    GEMINI_API_KEY: "fake-key",
    GOOGLE_GEMINI_BASE_URL: model.url,
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    DENO_DIR: await denoCacheDir(),
  }, { cwd: project });
}

Deno.test({
  name: `Claude Code -p: the Stop hook holds the turn and hands the model the message${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await install(home, db, "claude-code");
    let posted = false;
    await using model = startFakeAnthropic(
      [{ name: "mcp__agent-bus__topic_join", input: JOIN }],
      {
        finalText: "Joined; nothing to do yet.",
        async beforeText() {
          if (posted) return;
          posted = true;
          await post(db, "Can you review PR 42 before the release?");
        },
      },
    );
    const result = await runClaude(home, project, model);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(model.results.length, 1, "the join ran");
    assert.ok(!model.results[0]!.isError, model.results[0]!.text);
    const held = requestWith(model, "Can you review PR 42 before the release?");
    assert.ok(held > 0, `a request carried the message:\n${result.stdout}\n${result.stderr}`);
    const body = JSON.stringify(model.requests[held]);
    assert.match(body, /agent-bus: messages are waiting for you/);
    assert.match(body, /sync\(topic_id=/);
  },
});

Deno.test({
  name:
    `Claude Code -p on call: a message posted while the Stop hook waits brings the next request before the wait ends${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    // After the message is handled, the next stop waits again for up to 8 s, then lets go.
    await install(home, db, "claude-code", "--wait", String(ON_CALL_WAIT_S));
    let postedAt = 0;
    let answeredAt = 0;
    await using model = startFakeAnthropic(
      [{ name: "mcp__agent-bus__topic_join", input: JOIN }],
      {
        finalText: "Joined; on call.",
        beforeText() {
          if (postedAt === 0 && answeredAt === 0) {
            answeredAt = performance.now();
            // The message comes while the stop hook waits (1.5 s is the scenario, not a sync).
            setTimeout(async () => {
              postedAt = await post(db, "On-call review: PR 9.");
            }, 1500);
          }
          return Promise.resolve();
        },
      },
    );
    const started = model.requests.length;
    const result = await runClaude(home, project, model);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const held = requestWith(model, "On-call review: PR 9.");
    assert.ok(held > started, `a request carried the message:\n${result.stdout}\n${result.stderr}`);
    const seenAt = model.requestTimes[held]!;
    assert.ok(postedAt > answeredAt, "posted after the turn ended");
    // Woken by the message, not found at the wait's end: the hook started after the turn ended,
    // so a hook that waited out its 8 s would hand it over later than this. (How fast it hands
    // it over is a bench row: a commit to the hook's answer.)
    assert.ok(
      seenAt < answeredAt + ON_CALL_WAIT_S * 1000,
      `the model was asked again ${Math.round(seenAt - postedAt)} ms after the message`,
    );
  },
});

Deno.test({
  name:
    `Gemini CLI -p: the AfterAgent hook rejects the answer and hands the model the message${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await installGemini(home, db);
    await using model = startFakeGemini(
      [{ name: "mcp_agent-bus_topic_join", input: JOIN }],
      { beforeText: postOnce(db, "Gemini, please check the changelog.") },
    );
    const result = await runGemini(home, project, model);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(model.results.length, 1, `the join ran:\n${result.stdout}\n${result.stderr}`);
    const held = requestWith(model, "Gemini, please check the changelog.");
    assert.ok(held > 0, `a request carried the message:\n${result.stdout}\n${result.stderr}`);
    const request = JSON.stringify(model.requests[held]);
    assert.match(request, /agent-bus: messages are waiting for you/);
    // Once: the BeforeAgent hook Gemini CLI runs on the resumed turn adds no second copy.
    assert.doesNotMatch(request, /agent-bus: 1 unread on release-1\.4/);
    assert.equal(request.split("Gemini, please check the changelog.").length - 1, 1);
  },
});

Deno.test({
  name:
    `Gemini CLI -p on call: an answer committed while the AfterAgent hook waits reaches the model${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await installGemini(home, db, "--wait", "10");
    let postedAt = 0;
    let answeredAt = 0;
    await using model = startFakeGemini(
      [{ name: "mcp_agent-bus_topic_join", input: JOIN }],
      {
        beforeText() {
          if (answeredAt === 0) {
            answeredAt = performance.now();
            // The answer comes while the hook waits (the scenario's delay, not a synchronisation).
            setTimeout(async () => {
              postedAt = await post(db, "On-call answer: ship it.");
            }, 2900);
          }
          return Promise.resolve();
        },
      },
    );
    const result = await runGemini(home, project, model);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const held = requestWith(model, "On-call answer: ship it.");
    const log = await Deno.readTextFile(`${tmp.path}/hooks.log`).catch(() => "(no hooks.log)");
    assert.ok(held > 0, `a request carried the answer:\n${log}\n${result.stderr}`);
    assert.ok(postedAt > answeredAt, "posted after the turn ended");
  },
});

Deno.test({
  name:
    `two Claude Code sessions in two projects: each Stop hook reports only its own unread${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, db } = await setUp(tmp.path);
    assert.equal((await cli(["topics", "create", "beta"], { AGENT_BUS_DB: db })).code, 0);
    await install(home, db, "claude-code");
    const projects = [`${tmp.path}/alpha-project`, `${tmp.path}/beta-project`];
    for (const dir of projects) await Deno.mkdir(dir);
    // Each model's message is posted to its own topic as its turn ends (B's after A's).
    const { promise: postedForA, resolve: markPosted } = Promise.withResolvers<void>();
    let posted = false;
    await using a = startFakeAnthropic(
      [{ name: "mcp__agent-bus__topic_join", input: { name: "release-1.4", agent_name: "alpha" } }],
      {
        async beforeText() {
          if (posted) return;
          posted = true;
          await post(db, "Only for alpha: merge PR 5.");
          markPosted();
        },
      },
    );
    let postedB = false;
    await using b = startFakeAnthropic(
      [{ name: "mcp__agent-bus__topic_join", input: { name: "beta", agent_name: "beta" } }],
      {
        async beforeText() {
          if (postedB) return;
          postedB = true;
          await postedForA;
          await post(db, "Only for beta: tag v2.", "beta");
        },
      },
    );
    const [ra, rb] = await Promise.all([
      runClaude(home, projects[0]!, a),
      runClaude(home, projects[1]!, b),
    ]);
    assert.equal(ra.code, 0, ra.stdout + ra.stderr);
    assert.equal(rb.code, 0, rb.stdout + rb.stderr);
    assert.ok(requestWith(a, "Only for alpha: merge PR 5.") > 0, "alpha's hook handed it over");
    assert.ok(requestWith(b, "Only for beta: tag v2.") > 0, "beta's hook handed it over");
    assert.equal(
      requestWith(b, "Only for alpha"),
      -1,
      "beta's hook did not report alpha's message",
    );
    assert.equal(requestWith(a, "Only for beta"), -1, "alpha's hook did not report beta's message");
  },
});

/** PATH with the pinned Codex first, as a user who installed it has. */
const codexPath = () =>
  `${clients.bin("codex").replace(/\/codex$/, "")}:${Deno.env.get("PATH") ?? ""}`;

/** A HOME whose Codex talks to `model` (a fake Responses API), before `install` adds to it. */
async function codexHome(home: string, model: FakeModel) {
  await Deno.mkdir(`${home}/.codex`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.codex/config.toml`,
    [
      `model = "gpt-fake"`,
      `model_provider = "fake"`,
      `[model_providers.fake]`,
      `name = "fake"`,
      `base_url = "${model.url}/v1"`,
      `wire_api = "responses"`,
      `env_key = "FAKE_KEY"`,
      `[hooks.state."/elsewhere/hooks.json:stop:0:0"]`,
      `trusted_hash = "sha256:someone-else"`,
      "",
    ].join("\n"),
  );
}

Deno.test({
  name:
    `Codex: install --trust has Codex trust the hooks through its app-server; doctor shows hooks it does not trust as failing, with the fix${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await using model = startFakeOpenAI([]);
    await codexHome(home, model);
    const env = { HOME: home, AGENT_BUS_DB: db, PATH: codexPath() };
    // Without --trust, Codex lists them untrusted: doctor says so and how to fix it.
    const plain = await cli(["install", "codex", "--hooks"], env, { cwd: project });
    assert.equal(plain.code, 0, plain.stderr);
    const before = await cli(["doctor"], env, { cwd: project });
    assert.match(
      before.stdout,
      /✘ Hooks \(Codex\).*Codex does not trust SessionStart, UserPromptSubmit, Stop/,
    );
    assert.match(before.stdout, /agent-bus install codex --hooks --trust.*type \/hooks/s);

    const trusted = await cli(["install", "codex", "--hooks", "--trust"], env, { cwd: project });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.match(
      trusted.stdout,
      /Codex trusts the agent-bus hooks \(SessionStart, UserPromptSubmit, Stop\), checked through its app-server \(codex 0\.169\.0\)/,
    );
    const config = await Deno.readTextFile(`${home}/.codex/config.toml`);
    assert.match(config, /trusted_hash = "sha256:someone-else"/, "another hook's trust is kept");
    assert.equal(config.match(/trusted_hash = "sha256:[0-9a-f]{64}"/g)?.length, 3);
    const after = await cli(["doctor"], env, { cwd: project });
    assert.match(after.stdout, /✔ Hooks \(Codex\).*trusted by codex 0\.169\.0/);

    // Without Codex on the PATH, install says exactly what to do by hand.
    const nowhere = await cli(["install", "codex", "--hooks", "--trust"], {
      HOME: home,
      AGENT_BUS_DB: db,
      PATH: "/usr/bin:/bin",
    }, { cwd: project });
    assert.equal(nowhere.code, 0, nowhere.stderr);
    assert.match(
      nowhere.stderr,
      /not on the PATH.*start `codex`, type \/hooks, and trust the agent-bus hooks/,
    );
  },
});

Deno.test({
  name:
    `Codex exec, installed with --trust and run without a bypass flag: the Stop hook holds the turn and hands the model the message${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await using model = startFakeOpenAI(
      [{ name: "mcp__agent_bus/topic_join", input: JOIN }],
      { beforeText: postOnce(db, "Codex agent, please check the changelog.") },
    );
    await codexHome(home, model);
    const installed = await cli(["install", "codex", "--hooks", "--trust"], {
      HOME: home,
      AGENT_BUS_DB: db,
      PATH: codexPath(),
    }, { cwd: project });
    assert.equal(installed.code, 0, installed.stderr);
    const result = await run(clients.bin("codex"), [
      "exec",
      "--skip-git-repo-check",
      "Join release-1.4 and wait for work.",
    ], {
      HOME: home,
      CODEX_HOME: `${home}/.codex`,
      PATH: codexPath(),
      FAKE_KEY: "fake-key",
      DENO_DIR: await denoCacheDir(),
    }, { cwd: project });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(model.results.length, 1, `the join ran:\n${result.stdout}\n${result.stderr}`);
    const held = requestWith(model, "Codex agent, please check the changelog.");
    assert.ok(held > 0, `a request carried the message:\n${result.stdout}\n${result.stderr}`);
    assert.match(JSON.stringify(model.requests[held]), /agent-bus: messages are waiting for you/);
  },
});

Deno.test({
  name:
    `Codex exec with a server that takes 4 s to start: install made it required, so Codex waits for it and the join runs${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await using model = startFakeOpenAI([{ name: "mcp__agent_bus/topic_join", input: JOIN }]);
    await codexHome(home, model);
    const env = { HOME: home, AGENT_BUS_DB: db, PATH: codexPath() };
    assert.equal((await cli(["install", "codex", "--trust"], env, { cwd: project })).code, 0);
    const config = readTomlConfig(
      "config.toml",
      await Deno.readTextFile(`${home}/.codex/config.toml`),
    );
    const entry =
      (config.mcp_servers as Record<string, { command: string; args: string[] }>)["agent-bus"]!;
    const slow = slowStart(entry);
    const started = performance.now();
    const result = await run(clients.bin("codex"), [
      "exec",
      "--skip-git-repo-check",
      "-c",
      `mcp_servers.agent-bus.command=${JSON.stringify(slow.command)}`,
      "-c",
      `mcp_servers.agent-bus.args=${JSON.stringify(slow.args)}`,
      "Join release-1.4.",
    ], {
      ...env,
      CODEX_HOME: `${home}/.codex`,
      FAKE_KEY: "fake-key",
      DENO_DIR: await denoCacheDir(),
    }, {
      cwd: project,
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.ok(performance.now() - started >= SLOW_START_S * 1000, "the server was started slowly");
    assert.equal(model.results.length, 1, `the join ran:\n${result.stdout}\n${result.stderr}`);
    assert.match(model.results[0]!.text, /"agent_name":"claude"/);
  },
});

Deno.test({
  name:
    `Claude Code -p with a server that takes 4 s to start: the model waits for it (WaitForMcpServers) and joins${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const { home, project, db } = await setUp(tmp.path);
    await install(home, db, "claude-code");
    const config = JSON.parse(await Deno.readTextFile(`${home}/.claude.json`));
    const entry = config.mcpServers["agent-bus"];
    config.mcpServers["agent-bus"] = { ...entry, ...slowStart(entry) };
    await Deno.writeTextFile(`${home}/.claude.json`, JSON.stringify(config));
    await using model = startFakeAnthropic([{ name: "mcp__agent-bus__topic_join", input: JOIN }]);
    const result = await runClaude(home, project, model);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const first = model.requests[0] as { tools?: { name: string }[] };
    assert.ok(
      (first.tools ?? []).some((tool) => tool.name === "WaitForMcpServers"),
      "the first turn began while the server was still starting",
    );
    assert.equal(model.results.length, 1, `the join ran:\n${result.stdout}\n${result.stderr}`);
    assert.match(model.results[0]!.text, /"agent_name":"claude"/);
  },
});
