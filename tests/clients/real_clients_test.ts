/**
 * Our servers as real MCP clients see them: the MCP Inspector CLI lists
 * and calls tools over stdio and HTTP, the official conformance suite runs
 * the scenarios that apply to any server against both HTTP routes, and
 * the configs `agent-bus install` writes are ones the clients connect
 * with. (Their own `mcp add` commands: mcp_add_test.ts, a file of its own
 * so the two halves run in parallel.)
 */

import assert from "node:assert/strict";
import { installClients } from "../_helpers/clients.ts";
import { cli, denoCacheDir } from "../_helpers/cli.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { serverCommand } from "../_helpers/peer.ts";
import { run } from "../_helpers/run.ts";
import { tmpDir } from "../_helpers/tmp.ts";

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

/** The conformance scenarios that apply to any server (the others expect fixture tools). */
const CONFORMANCE_SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

Deno.test({
  name: `the MCP conformance suite passes on /mcp and on a mailbox route${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    await using http = await startHttpServer({ dbPath: `${tmp.path}/bus.sqlite` });
    const suite = `${clients.dir}/node_modules/@modelcontextprotocol/conformance/dist/index.js`;
    for (const path of ["/mcp", "/agents/conformance/mcp/"]) {
      for (const scenario of CONFORMANCE_SCENARIOS) {
        const result = await run(Deno.execPath(), [
          "run",
          "--allow-all",
          suite,
          "server",
          "--url",
          `${http.url}${path}`,
          "--scenario",
          scenario,
        ], { PATH: Deno.env.get("PATH") ?? "", HOME: tmp.path, DENO_DIR: await denoCacheDir() });
        assert.equal(result.code, 0, `${scenario} on ${path}:\n${result.stdout}\n${result.stderr}`);
        assert.match(result.stdout + result.stderr, / 0 failed/, `${scenario} on ${path}`);
      }
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
