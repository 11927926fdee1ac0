/**
 * Our servers as real MCP clients see them: the MCP Inspector CLI lists
 * and calls tools over stdio and HTTP, the official conformance suite runs
 * its whole active suite against three HTTP routes, and
 * the configs `agent-bus install` writes are ones the clients connect
 * with. (Their own `mcp add` commands: mcp_add_test.ts, a file of its own
 * so the two halves run in parallel.)
 */

import assert from "node:assert/strict";
import { installClients } from "../_helpers/clients.ts";
import { cli } from "../_helpers/cli.ts";
import { denoCacheDir } from "../_helpers/run.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { serverCommand } from "../_helpers/peer.ts";
import { run } from "../_helpers/run.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { withAppServer } from "../../lib/cli/install/codex_trust.ts";

const clients = await installClients();
const skip = clients.unavailable ? ` (SKIPPED: ${clients.unavailable})` : "";

Deno.test({
  name: `MCP Inspector CLI lists and calls the peer tools over stdio and over HTTP${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    await using http = await startHttpServer({ dbPath });
    const targets = {
      stdio: ["-e", `AGENT_BUS_DB=${dbPath}`, "--", ...serverCommand(dbPath)],
      // Inspector 0.15 always talks to the path /mcp, so it checks the peer route.
      http: [`${http.url}/mcp`, "--transport", "http"],
    };
    for (const [name, target] of Object.entries(targets)) {
      const inspect = (...method: string[]) =>
        run(clients.bin("mcp-inspector"), ["--cli", ...target, ...method]);
      const list = await inspect("--method", "tools/list");
      assert.equal(list.code, 0, list.stderr);
      assert.equal((JSON.parse(list.stdout) as { tools: unknown[] }).tools.length, 10, name);
      const call = await inspect(
        "--method",
        "tools/call",
        "--tool-name",
        "topic_create",
        "--tool-arg",
        `name=via-${name}`,
      );
      assert.equal(call.code, 0, call.stderr);
      const result = JSON.parse(call.stdout) as { structuredContent: { name: string } };
      assert.equal(result.structuredContent.name, `via-${name}`);
    }
  },
});

/**
 * Scenarios of the suite that need its own fixtures (tools that return
 * images or audio, sample, elicit or log; fixture resources and prompts;
 * completion): expected to fail on our routes. Every other scenario of the
 * active suite must pass, and one of these passing would fail the run too
 * (the suite reports a stale baseline), so the list stays exact.
 */
const NEEDS_FIXTURES = [
  "logging-set-level",
  "completion-complete",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "elicitation-sep1034-defaults",
  "elicitation-sep1330-enums",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
];

/** Routes, and the fixture scenarios each passes anyway (it has resources or prompts of its own). */
const ROUTES: Record<string, string[]> = {
  "/mcp": ["resources-list", "prompts-list", "completion-complete"],
  "/agents/conformance/mcp/": ["resources-list", "resources-subscribe", "resources-unsubscribe"],
  "/chatbus/mcp": ["resources-list", "prompts-list"],
};

Deno.test({
  name: `the MCP conformance suite passes on /mcp, a mailbox route and /chatbus/mcp${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    await using http = await startHttpServer({ dbPath: `${tmp.path}/bus.sqlite` });
    const suite = `${clients.dir}/node_modules/@modelcontextprotocol/conformance/dist/index.js`;
    for (const [path, passing] of Object.entries(ROUTES)) {
      const baseline = `${tmp.path}/expected-failures.yaml`;
      const expected = NEEDS_FIXTURES.filter((scenario) => !passing.includes(scenario));
      await Deno.writeTextFile(baseline, `server:\n${expected.map((s) => `  - ${s}\n`).join("")}`);
      const result = await run(Deno.execPath(), [
        "run",
        "--allow-all",
        suite,
        "server",
        "--url",
        `${http.url}${path}`,
        "--expected-failures",
        baseline,
      ], { PATH: Deno.env.get("PATH") ?? "", HOME: tmp.path, DENO_DIR: await denoCacheDir() });
      const output = result.stdout + result.stderr;
      assert.equal(result.code, 0, `${path}:\n${output}`);
      assert.match(output, /Baseline check passed/, path);
      assert.match(output, /✓ server-initialize/, path);
      assert.match(output, /✓ dns-rebinding-protection/, path);
    }
  },
});

Deno.test({
  name:
    `agent-bus install writes configs that Claude Code, Gemini CLI and OpenCode connect with${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const env = {
      HOME: tmp.path,
      AGENT_BUS_DB: `${tmp.path}/data/bus.sqlite`,
      XDG_CONFIG_HOME: "",
    };
    for (const client of ["claude-code", "gemini", "opencode"]) {
      const installed = await cli(["install", client], env);
      assert.equal(installed.code, 0, installed.stderr);
    }
    const listEnv = {
      HOME: tmp.path,
      PATH: Deno.env.get("PATH") ?? "",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    };
    const claude = await run(clients.bin("claude"), ["mcp", "list"], listEnv);
    assert.match(claude.stdout, /agent-bus: .*✔ Connected/, claude.stdout + claude.stderr);
    const gemini = await run(clients.bin("gemini"), ["mcp", "list"], listEnv);
    assert.match(
      gemini.stdout + gemini.stderr,
      /✓ agent-bus: .*Connected/,
      gemini.stdout + gemini.stderr,
    );
    const opencode = await run(clients.bin("opencode"), ["mcp", "list"], listEnv);
    assert.match(
      opencode.stdout + opencode.stderr,
      /✓ agent-bus\s.*connected/,
      opencode.stdout + opencode.stderr,
    );
  },
});

Deno.test({
  name:
    `install --url writes configs with which Claude Code, Gemini CLI, OpenCode and Codex attach to the resident bus by URL${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const db = `${tmp.path}/data/bus.sqlite`;
    const env = { HOME: tmp.path, AGENT_BUS_DB: db, XDG_CONFIG_HOME: "" };
    const started = await cli(["bus", "start", "--port", "0", "--json"], env);
    assert.equal(started.code, 0, started.stderr);
    const { url } = JSON.parse(started.stdout) as { url: string };
    const port = new URL(url).port;
    try {
      for (const client of ["claude-code", "gemini", "opencode", "codex"]) {
        const installed = await cli(["install", client, "--url", "--port", port], env);
        assert.equal(installed.code, 0, installed.stderr);
      }
      const listEnv = {
        HOME: tmp.path,
        PATH: `${clients.dir}/node_modules/.bin:${Deno.env.get("PATH") ?? ""}`,
        GEMINI_CLI_TRUST_WORKSPACE: "true",
      };
      const claude = await run(clients.bin("claude"), ["mcp", "list"], listEnv);
      assert.match(claude.stdout, /agent-bus: http:.*\(HTTP\) - ✔ Connected/, claude.stdout);
      const gemini = await run(clients.bin("gemini"), ["mcp", "list"], listEnv);
      const geminiSaid = gemini.stdout + gemini.stderr;
      assert.match(geminiSaid, /✓ agent-bus: http:.*\(http\) - Connected/, geminiSaid);
      const opencode = await run(clients.bin("opencode"), ["mcp", "list"], listEnv);
      const opencodeSaid = opencode.stdout + opencode.stderr;
      assert.match(opencodeSaid, /✓ agent-bus\s.*connected/, opencodeSaid);
      // Codex's own app-server connects to its servers and lists their tools.
      const servers = await withAppServer(
        { cwd: tmp.path, env: listEnv },
        (codex) => codex.call("mcpServerStatus/list", {}),
      );
      const ours = (servers.data as { name: string; tools: Record<string, unknown> }[])
        .find((server) => server.name === "agent-bus");
      assert.ok(ours?.tools.topic_create, JSON.stringify(servers).slice(0, 2000));

      // The sessions were the bus's, and doctor finds every entry served.
      const doctor = await cli(["doctor", "--json"], env);
      const findings = JSON.parse(doctor.stdout).findings as {
        check: string;
        status: string;
        detail: string;
      }[];
      for (const title of ["Claude Code", "Gemini CLI", "OpenCode", "Codex"]) {
        const found = findings.find((f) => f.check === title);
        assert.equal(found?.status, "ok", JSON.stringify(found));
        assert.match(found!.detail, /attaches to http:.*, served by the resident bus/);
      }
    } finally {
      await cli(["bus", "stop"], env);
    }
  },
});
