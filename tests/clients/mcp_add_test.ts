/**
 * Claude Code and Gemini CLI, configured with their own `mcp add` commands
 * (the ones the README shows), connect to our servers over stdio and over
 * HTTP, as their health checks (`mcp list`) report.
 */

import assert from "node:assert/strict";
import { installClients } from "../_helpers/clients.ts";
import { denoCacheDir } from "../_helpers/run.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { serverCommand } from "../_helpers/peer.ts";
import { run } from "../_helpers/run.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const clients = await installClients();
const skip = clients.unavailable ? ` (SKIPPED: ${clients.unavailable})` : "";

/** Configure servers with a client's own `mcp add` commands, then return what `mcp list` prints. */
async function addThenList(
  bin: string,
  adds: string[][],
  env: Record<string, string>,
): Promise<string> {
  for (const args of adds) {
    const added = await run(bin, ["mcp", "add", ...args], env);
    assert.equal(added.code, 0, added.stderr);
  }
  const list = await run(bin, ["mcp", "list"], env);
  return list.stdout + list.stderr;
}

Deno.test({
  name:
    `Claude Code connects to the peer, peer-bus, teacher and student servers and an HTTP mailbox${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    await using http = await startHttpServer({ dbPath });
    const env: Record<string, string> = { HOME: tmp.path, PATH: Deno.env.get("PATH") ?? "" };
    const serverEnv = ["-e", `AGENT_BUS_DB=${dbPath}`, "-e", `DENO_DIR=${await denoCacheDir()}`];
    const listed = await addThenList(clients.bin("claude"), [
      ["agent-bus", "-s", "user", ...serverEnv, "--", ...serverCommand(dbPath)],
      [
        "bus",
        "-s",
        "user",
        ...serverEnv,
        "--",
        ...serverCommand(dbPath),
        ...["--profile", "peerbus", "--agent", "claude", "--push", "claude-channel"],
      ],
      ["--transport", "http", "-s", "user", "mailbox", `${http.url}/agents/claude/mcp/`],
      ["teacher", "-s", "user", ...serverEnv, "--", ...serverCommand(dbPath), "--role", "teacher"],
      ["student", "-s", "user", ...serverEnv, "--", ...serverCommand(dbPath), "--role", "student"],
    ], env);
    assert.match(listed, /teacher: .*✔ Connected/, listed);
    assert.match(listed, /student: .*✔ Connected/, listed);
    assert.match(listed, /agent-bus: .*✔ Connected/, listed);
    assert.match(listed, /bus: .*✔ Connected/, listed);
    assert.match(listed, /mailbox: .*\(HTTP\) - ✔ Connected/, listed);
  },
});

Deno.test({
  name: `Gemini CLI connects to the peer server and to an HTTP mailbox${skip}`,
  ignore: !!clients.unavailable,
  async fn() {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    await using http = await startHttpServer({ dbPath });
    const env: Record<string, string> = {
      HOME: tmp.path,
      PATH: Deno.env.get("PATH") ?? "",
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      DENO_DIR: await denoCacheDir(),
      AGENT_BUS_DB: dbPath,
    };
    const listed = await addThenList(clients.bin("gemini"), [
      ["-s", "user", "agent-bus", ...serverCommand(dbPath)],
      ["-s", "user", "--transport", "http", "mailbox", `${http.url}/agents/gemini/mcp/`],
    ], env);
    assert.match(listed, /✓ agent-bus: .*Connected/, listed);
    assert.match(listed, /✓ mailbox: .*Connected/, listed);
  },
});
