/**
 * Our stdio server as real MCP clients see it: the MCP Inspector CLI lists
 * and calls tools, and the health checks of Claude Code and Gemini CLI
 * connect to it as configured by their own `mcp add` commands (the ones the
 * README shows).
 */

import assert from "node:assert/strict";
import { installClients } from "../_helpers/clients.ts";
import { serverCommand } from "../_helpers/peer.ts";
import { run } from "../_helpers/run.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const clients = await installClients();
const skip = clients.unavailable ? ` (SKIPPED: ${clients.unavailable})` : "";

/** Deno's cache, so a server started under another HOME still starts offline. */
async function denoCacheDir(): Promise<string> {
  const info = await run(Deno.execPath(), ["info", "--json"]);
  return (JSON.parse(info.stdout) as { denoDir: string }).denoDir;
}

Deno.test({
  name: `MCP Inspector CLI lists the tools and calls one${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const inspect = (...method: string[]) =>
      run(clients.bin("mcp-inspector"), [
        "--cli",
        "-e",
        `AGENT_BUS_DB=${dbPath}`,
        "--",
        ...serverCommand(dbPath),
        ...method,
      ]);
    const list = await inspect("--method", "tools/list");
    assert.equal(list.code, 0, list.stderr);
    const tools = (JSON.parse(list.stdout) as { tools: { name: string }[] }).tools;
    assert.equal(tools.length, 10);
    const call = await inspect(
      "--method",
      "tools/call",
      "--tool-name",
      "topic_create",
      "--tool-arg",
      "name=from-inspector",
    );
    assert.equal(call.code, 0, call.stderr);
    const result = JSON.parse(call.stdout) as { structuredContent: { name: string } };
    assert.equal(result.structuredContent.name, "from-inspector");
  },
});

Deno.test({
  name: `Claude Code connects to the server from its user config${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const env: Record<string, string> = { HOME: tmp.path, PATH: Deno.env.get("PATH") ?? "" };
    const denoDir = await denoCacheDir();
    const claude = clients.bin("claude");
    const add = await run(claude, [
      "mcp",
      "add",
      "agent-bus",
      "-s",
      "user",
      "-e",
      `AGENT_BUS_DB=${dbPath}`,
      "-e",
      `DENO_DIR=${denoDir}`,
      "--",
      ...serverCommand(dbPath),
    ], env);
    assert.equal(add.code, 0, add.stderr);
    const list = await run(claude, ["mcp", "list"], env);
    assert.match(list.stdout, /agent-bus: .*✔ Connected/, list.stdout + list.stderr);
  },
});

Deno.test({
  name: `Gemini CLI connects to the server from its user settings${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const env: Record<string, string> = {
      HOME: tmp.path,
      PATH: Deno.env.get("PATH") ?? "",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      DENO_DIR: await denoCacheDir(),
      AGENT_BUS_DB: dbPath,
    };
    const gemini = clients.bin("gemini");
    const add = await run(gemini, [
      "mcp",
      "add",
      "-s",
      "user",
      "agent-bus",
      ...serverCommand(dbPath),
    ], env);
    assert.equal(add.code, 0, add.stderr);
    const list = await run(gemini, ["mcp", "list"], env);
    assert.match(list.stdout + list.stderr, /✓ agent-bus: .*Connected/, list.stdout + list.stderr);
  },
});
