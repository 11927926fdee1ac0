/**
 * What each profile is, as everything that serves it reads it from
 * `lib/mcp/profiles/`: its capabilities, its tools, what `install` writes
 * for it, what `serve` does with `--agent`, its HTTP route (one table row per
 * profile); and a seventh profile defined in the test tree
 * (`_helpers/seventh_profile.ts`) served over the stdio transport and over
 * Streamable HTTP with nothing changed under `lib/`.
 *
 * @module
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createLogger } from "../../lib/log.ts";
import { type Profile, PROFILES } from "../../lib/mcp/profiles/mod.ts";
import { createHttpHandler } from "../../lib/transports/http/handler.ts";
import { guardPolicy } from "../../lib/transports/http/guard.ts";
import { routeOf } from "../../lib/transports/http/routes.ts";
import { openStdioSession } from "../../lib/transports/stdio_session.ts";
import { StdioTransport } from "../../lib/transports/stdio_transport.ts";
import { openTestBus, openTestSearch } from "../_helpers/bus.ts";
import { cli } from "../_helpers/cli.ts";
import { connectHttp } from "../_helpers/http.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { startPeer } from "../_helpers/peer.ts";
import { readRows } from "../_helpers/store.ts";
import { seventh } from "../_helpers/seventh_profile.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** One row: what a profile must be. */
interface Row {
  capabilities: string[];
  /** `install claude-code --profile NAME --agent zed` writes these arguments (undefined: refused). */
  install: string[] | undefined;
  /**
   * `serve --profile NAME`: refused without an agent name ("required"), or,
   * given `--agent zed`, the agent of the session it records (null: none;
   * undefined: it records no session).
   */
  agent: "required" | "zed" | null | undefined;
  /** The path its HTTP route answers on (undefined: it has none of its own). */
  route: string | undefined;
}

const TABLE: Record<string, Row> = {
  peer: {
    capabilities: ["completions", "prompts", "resources", "tools"],
    install: [],
    agent: null,
    route: "/mcp",
  },
  peerbus: {
    capabilities: ["resources", "tools"],
    install: ["--profile", "peerbus", "--agent", "zed"],
    agent: "required",
    route: undefined,
  },
  mailbox: {
    capabilities: ["resources", "tools"],
    install: undefined,
    agent: "required",
    route: "/agents/zed/mcp/",
  },
  teacher: {
    capabilities: ["completions", "prompts", "tools"],
    install: ["--role", "teacher", "--agent", "zed"],
    agent: "zed",
    route: undefined,
  },
  student: {
    capabilities: ["tools"],
    install: ["--role", "student", "--agent", "zed"],
    agent: "zed",
    route: undefined,
  },
  chatbus: {
    capabilities: ["prompts", "resources", "tools"],
    install: ["--profile", "chatbus"],
    agent: undefined,
    route: "/chatbus/mcp",
  },
};

Deno.test("every profile: capabilities, tools, what install writes, --agent, its HTTP route", async () => {
  assert.deepEqual(PROFILES.map((p) => p.name).sort(), Object.keys(TABLE).sort());
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  for (const profile of PROFILES) {
    const row = TABLE[profile.name]!;
    await using served = await connectInProcess(dbPath, profile, { server: { agent: "zed" } });
    const capabilities = Object.keys(served.client.getServerCapabilities() ?? {}).sort();
    assert.deepEqual(capabilities, row.capabilities, `${profile.name}: capabilities`);
    const tools = (await served.client.listTools()).tools.map((tool) => tool.name);
    assert.deepEqual(tools, profile.tools.map((tool) => tool.name), `${profile.name}: tools`);

    const env = { AGENT_BUS_DB: dbPath, HOME: `${tmp.path}/home` };
    const install = await cli(
      [
        "install",
        "claude-code",
        "--profile",
        profile.name,
        "--agent",
        "zed",
        "--dry-run",
        "--json",
      ],
      env,
      { cwd: tmp.path },
    );
    if (row.install === undefined) {
      assert.equal(install.code, 2, `${profile.name}: install refused`);
    } else {
      assert.equal(install.code, 0, install.stderr);
      const { name, entry } = JSON.parse(install.stdout);
      assert.equal(name, profile.install!.serverName);
      const args = entry.args as string[];
      const main = args.findIndex((arg) => arg.endsWith("entry.bundle.js"));
      assert.deepEqual(args.slice(main + 1), row.install, `${profile.name}: install`);
    }

    if (row.agent === "required") {
      const refused = await cli(["--profile", profile.name], { AGENT_BUS_DB: dbPath });
      assert.equal(refused.code, 2, `${profile.name}: serve without --agent`);
      assert.match(refused.stderr, /needs a name/);
    } else {
      const record = `SELECT agent FROM bus_sessions WHERE profile = '${profile.name}'`;
      await using process = await startPeer({
        dbPath,
        args: ["--profile", profile.name, "--agent", "zed"],
      });
      await process.client.ping();
      const rows = await readRows(dbPath, record);
      assert.deepEqual(
        rows.map((r) => r.agent),
        row.agent === undefined ? [] : [row.agent],
        `${profile.name}: serve --agent zed`,
      );
    }

    const route = row.route === undefined ? undefined : routeOf(row.route, profile);
    if (route !== undefined) {
      assert.ok(!("error" in route) && route.profile === profile, `${profile.name}: route`);
    }
    assert.equal(
      profile.http.atMcp === true || profile.http.path !== undefined ||
        profile.http.perAgent === true,
      row.route !== undefined,
    );
  }
});

Deno.test("a profile defined outside lib/ is served over the stdio transport and over HTTP", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using bus = openTestBus(dbPath);
  const expect = async (client: Client) => {
    assert.deepEqual(
      (await client.listTools()).tools.map((tool) => tool.name),
      seventh.tools.map((tool) => tool.name),
    );
    assert.ok(client.getServerCapabilities()?.experimental, "its feature's capability");
    const echoed = await client.callTool({ name: "seventh_echo", arguments: { text: "hi" } });
    assert.deepEqual(echoed.structuredContent, { text: "hi" });
    assert.match(client.getInstructions() ?? "", /seventh/);
  };

  // stdio: the real transport over a pair of pipes.
  const toServer = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const transport = new StdioTransport({
    stdin: toServer.readable,
    stdout: toClient.writable,
    maxLineBytes: 1 << 20,
  });
  const session = await openStdioSession(
    transport,
    { profile: seventh, config: bus.config },
    createLogger("error"),
  );
  const client = new Client({ name: "seventh-test", version: "1" });
  // The client's side: the same line transport, the other way round.
  await client.connect(
    new StdioTransport({
      stdin: toClient.readable,
      stdout: toServer.writable,
      maxLineBytes: 1 << 20,
    }),
  );
  await expect(client);
  await client.close();
  await session.stop();

  // HTTP: the node told to serve it at /mcp.
  await using search = openTestSearch(bus);
  const handler = createHttpHandler({
    deps: { bus, search },
    policy: guardPolicy("127.0.0.1", {}),
    maxBodyBytes: 1 << 20,
    sessionIdleMs: 60_000,
    jsonResponse: undefined,
    atMcp: seventh satisfies Profile,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler.handle);
  try {
    await using http = await connectHttp(
      `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/mcp`,
    );
    await expect(http.client);
  } finally {
    await handler.close();
    await server.shutdown();
  }
});
