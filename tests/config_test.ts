/**
 * Tests of `loadConfig()`: defaults, path expansion, and bad values turned
 * into warnings instead of failures.
 */

import assert from "node:assert/strict";
import { DEFAULTS, loadConfig, redactUrl, urlScheme } from "../lib/config.ts";

Deno.test("loadConfig() uses the seed's defaults and the home database", () => {
  const { config, warnings } = loadConfig({ HOME: "/home/u" });
  assert.deepEqual(warnings, []);
  assert.equal(config.dbPath, "/home/u/.agent_bus/agent_bus.sqlite");
  assert.equal(config.maxOutbox, 50);
  assert.equal(config.maxMessageChars, 65536);
  assert.equal(config.maxSyncItems, 20);
  assert.equal(config.toolResultMaxBytes, 10000);
  assert.equal(config.maxWaitSeconds, DEFAULTS.maxWaitSeconds);
});

Deno.test("loadConfig() reads the result budget under its older name too", () => {
  assert.equal(
    loadConfig({ AGENT_BUS_TOOL_TEXT_MAX_CHARS: "30000" }).config.toolResultMaxBytes,
    30000,
  );
  assert.equal(
    loadConfig({ AGENT_BUS_TOOL_TEXT_MAX_CHARS: "30000", AGENT_BUS_TOOL_RESULT_MAX_BYTES: "5000" })
      .config.toolResultMaxBytes,
    5000,
  );
});

Deno.test("loadConfig() expands ~ and accepts :memory:", () => {
  assert.equal(loadConfig({ HOME: "/h", AGENT_BUS_DB: "~/x/bus.db" }).config.dbPath, "/h/x/bus.db");
  assert.equal(loadConfig({ AGENT_BUS_DB: ":memory:" }).config.dbPath, ":memory:");
  assert.equal(loadConfig({ AGENT_BUS_DB: "/abs/bus.db" }).config.dbPath, "/abs/bus.db");
});

Deno.test("loadConfig() reports a bad value and keeps the default", () => {
  const { config, warnings } = loadConfig({
    HOME: "/h",
    AGENT_BUS_MAX_SYNC_ITEMS: "bogus",
    AGENT_BUS_MAX_OUTBOX: "0",
    AGENT_BUS_TOOL_TEXT_MAX_CHARS: "10",
    AGENT_BUS_MAX_WAIT_SECONDS: "1.5",
    AGENT_BUS_TOOL_TEXT_INCLUDE_BODIES: "maybe",
    AGENT_BUS_LOG_LEVEL: "loud",
  });
  assert.equal(config.maxSyncItems, 20);
  assert.equal(config.maxOutbox, 50);
  assert.equal(config.toolResultMaxBytes, 10000);
  assert.equal(config.maxWaitSeconds, DEFAULTS.maxWaitSeconds);
  assert.equal(config.toolTextIncludeBodies, true);
  assert.equal(config.logLevel, "warn");
  assert.deepEqual(warnings.map((w) => w.variable).sort(), [
    "AGENT_BUS_LOG_LEVEL",
    "AGENT_BUS_MAX_OUTBOX",
    "AGENT_BUS_MAX_SYNC_ITEMS",
    "AGENT_BUS_MAX_WAIT_SECONDS",
    "AGENT_BUS_TOOL_TEXT_INCLUDE_BODIES",
    "AGENT_BUS_TOOL_TEXT_MAX_CHARS",
  ]);
  assert.match(warnings.find((w) => w.variable === "AGENT_BUS_MAX_SYNC_ITEMS")!.message, /bogus/);
});

Deno.test("loadConfig() reads valid overrides", () => {
  const { config, warnings } = loadConfig({
    AGENT_BUS_DB: ":memory:",
    AGENT_BUS_MAX_SYNC_ITEMS: "50",
    AGENT_BUS_MAX_WAIT_SECONDS: "0",
    AGENT_BUS_TOOL_TEXT_INCLUDE_BODIES: "0",
  });
  assert.deepEqual(warnings, []);
  assert.equal(config.maxSyncItems, 50);
  assert.equal(config.maxWaitSeconds, 0);
  assert.equal(config.toolTextIncludeBodies, false);
});

Deno.test("every variable lib/config.ts reads is in the environment table (docs/ENVIRONMENT.md)", async () => {
  const source = await Deno.readTextFile(new URL("../lib/config.ts", import.meta.url));
  const table = await Deno.readTextFile(new URL("../docs/ENVIRONMENT.md", import.meta.url));
  const variables = new Set(source.match(/\b(?:AGENT_BUS_[A-Z_]+|MCP_ROLE|NO_COLOR)\b/g));
  assert.ok(variables.size > 30, "the variables were found");
  const missing = [...variables].filter((name) => !table.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
});

Deno.test("a database URL is never taken for a file path, and its password is redacted", () => {
  const url = "postgres://bus:hunter2@127.0.0.1:5432/bus";
  assert.equal(loadConfig({ AGENT_BUS_DB: url }, { cwd: "/work" }).config.dbPath, url);
  assert.equal(
    loadConfig({ AGENT_BUS_DB: "file:///srv/bus.sqlite" }).config.dbPath,
    "/srv/bus.sqlite",
  );
  assert.equal(loadConfig({ AGENT_BUS_DB: "C:/bus.sqlite" }).config.dbPath, "C:/bus.sqlite");
  assert.equal(redactUrl(url), "postgres://bus:***@127.0.0.1:5432/bus");
  assert.equal(urlScheme("/tmp/x"), undefined);
});

Deno.test("loadConfig() reads AgentChatBus's variables where they mean ours, and names the rest", () => {
  const { config, warnings } = loadConfig({
    HOME: "/home/u",
    AGENTCHATBUS_HOST: "0.0.0.0",
    AGENTCHATBUS_PORT: "39765",
    AGENTCHATBUS_ALLOWED_HOSTS: "bus.example",
    AGENTCHATBUS_DB: "/data/bus.db",
    AGENTCHATBUS_RATE_LIMIT: "30",
  });
  assert.equal(config.http.host, "0.0.0.0");
  assert.equal(config.http.port, 39765);
  assert.deepEqual(config.http.allowedHosts, ["bus.example"]);
  assert.equal(config.dbPath, "/home/u/.agent_bus/agent_bus.sqlite", "their database is not ours");
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /AGENTCHATBUS_DB \(agent-bus keeps its own database/);
  assert.match(warnings[0]!.message, /AGENTCHATBUS_RATE_LIMIT/);
  // Ours win.
  const both = loadConfig({ AGENTCHATBUS_PORT: "39765", AGENT_BUS_HTTP_PORT: "9000" }).config;
  assert.equal(both.http.port, 9000);
  assert.equal(loadConfig({}).config.http.port, 8765);
});
