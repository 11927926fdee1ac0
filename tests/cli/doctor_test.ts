/**
 * `agent-bus doctor` as a real subprocess on healthy and broken setups:
 * what it reports, the fixes it suggests, its exit code, and that it
 * changes nothing.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { cli } from "../_helpers/cli.ts";
import { startFakeEmbedServer } from "../_helpers/embed_server.ts";
import { startPeer } from "../_helpers/peer.ts";
import { sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

sqliteTest(
  "doctor passes a healthy setup: database, schema, SQLite, endpoint and an installed client",
  "checks the SQLite file; doctor on PostgreSQL is tested in tests/store/postgres_store_test.ts",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/data/bus.sqlite`;
    await Deno.mkdir(`${tmp.path}/data`);
    {
      await using peer = await startPeer({ dbPath });
      await peer.ok("topic_create", { name: "t" });
    }
    await using embed = startFakeEmbedServer();
    const env = {
      HOME: tmp.path,
      AGENT_BUS_DB: dbPath,
      AGENT_BUS_EMBEDDINGS_URL: embed.url,
      AGENT_BUS_EMBEDDING_MODEL: "test-model",
      XDG_CONFIG_HOME: "",
    };
    assert.equal((await cli(["install", "claude-code"], env)).code, 0);
    const result = await cli(["doctor"], env);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const out = result.stdout;
    assert.match(out, /^agent-bus doctor \(/);
    assert.match(out, new RegExp(`✔ Database\\s+${dbPath.replaceAll(".", "\\.")} \\(`));
    assert.match(out, /✔ Schema\s+Agent Bus v6, our tables at level 13 of 13/);
    assert.match(out, /✔ SQLite\s+3\.\d+\.\d+, FTS5 available, journal mode wal/);
    assert.match(
      out,
      /✔ Embeddings\s+.*1024-dimension vectors for test-model: semantic search is on/,
    );
    // Started as Claude Code starts it, the entry answers initialize (the time is the machine's).
    assert.match(
      out,
      /✔ Claude Code\s+user: "agent-bus" → .*; initialize answered \d+ ms after start/,
    );
    assert.match(out, /· Clients\s+not configured: codex, gemini, cursor, opencode, vscode/);
    assert.match(out, /0 problems, 0 warnings$/m);
  },
);

sqliteTest(
  "doctor warns of an entry that may not reach its database's resident bus, and says to install again",
  "checks a SQLite file's socket; on PostgreSQL the socket is named after the URL",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const env = {
      HOME: tmp.path,
      AGENT_BUS_DB: dbPath,
      AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
      XDG_CONFIG_HOME: "",
    };
    assert.equal((await cli(["install", "claude-code"], env)).code, 0);
    // As an earlier version wrote it: the socket every database of the directory once shared.
    const config = `${tmp.path}/.claude.json`;
    const written = await Deno.readTextFile(config);
    const older = written.replace(/unix:[^,"]*\.sock/, `unix:${tmp.path}/agent-bus.sock`);
    assert.notEqual(older, written);
    await Deno.writeTextFile(config, older);
    const result = await cli(["doctor"], env);
    assert.match(
      result.stdout,
      /⚠ Claude Code\s+user: "agent-bus" may not connect to the resident bus's socket .*agent-bus-[0-9a-f]{16}\.sock: its agent is served in a process of its own .*\n\s+fix: `agent-bus install claude-code` again/,
    );
    // Installed again, it may.
    assert.equal((await cli(["install", "claude-code"], env)).code, 0);
    const again = await cli(["doctor"], env);
    assert.match(again.stdout, /✔ Claude Code\s+user: "agent-bus" → .*initialize answered/);
  },
);

sqliteTest(
  "doctor names each problem with its fix and exits 1",
  "checks the SQLite file; doctor on PostgreSQL is tested in tests/store/postgres_store_test.ts",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/foreign.sqlite`;
    const foreign = new DatabaseSync(dbPath);
    foreign.exec("CREATE TABLE stuff (x)");
    foreign.close();
    const before = await Deno.readFile(dbPath);
    await Deno.writeTextFile(
      `${tmp.path}/.claude.json`,
      JSON.stringify({
        mcpServers: {
          "agent-bus": {
            command: `${tmp.path}/gone/agent-bus`,
            args: [],
            env: { AGENT_BUS_DB: dbPath },
          },
        },
      }),
    );
    await Deno.mkdir(`${tmp.path}/.gemini`);
    await Deno.writeTextFile(
      `${tmp.path}/.gemini/settings.json`,
      JSON.stringify({
        mcpServers: {
          "agent-bus": {
            command: Deno.execPath(),
            args: [],
            env: { AGENT_BUS_DB: `${tmp.path}/other.sqlite` },
          },
        },
      }),
    );
    const env = {
      HOME: tmp.path,
      AGENT_BUS_DB: dbPath,
      AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
      XDG_CONFIG_HOME: "",
    };
    const result = await cli(["doctor"], env);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const out = result.stdout;
    assert.match(
      out,
      /✘ Schema\s+not an Agent Bus v6 database: it has no meta table\n\s+fix: `agent-bus db wipe --yes`/,
    );
    assert.match(
      out,
      /⚠ Embeddings\s+http:\/\/127\.0\.0\.1:9 .*Search works, as full text only\n\s+fix: start the endpoint/,
    );
    assert.match(
      out,
      /✘ Claude Code\s+user: "agent-bus" runs .*gone\/agent-bus, which does not exist/,
    );
    assert.match(
      out,
      /⚠ Gemini CLI\s+user: "agent-bus" uses .*other\.sqlite, not .*foreign\.sqlite: its agent will not see the others/,
    );
    // (The foreign file was made 0644: others could read it.)
    assert.match(
      out,
      /⚠ Privacy\s+other users of this machine can read what agents said: .*foreign\.sqlite is 0644\n\s+fix: chmod 600 /,
    );
    assert.match(out, /2 problems, 3 warnings/);
    assert.deepEqual(await Deno.readFile(dbPath), before, "doctor changed nothing");

    const json = JSON.parse((await cli(["doctor", "--json"], env)).stdout);
    assert.equal(json.ok, false);
    assert.deepEqual(
      json.findings.filter((f: { status: string }) => f.status === "fail").map((
        f: { check: string },
      ) => f.check),
      ["Schema", "Claude Code"],
    );
  },
);

sqliteTest(
  "doctor on a fresh machine says the database will be created, and does not create it",
  "checks the SQLite file; doctor on PostgreSQL is tested in tests/store/postgres_store_test.ts",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/new/bus.sqlite`;
    const env = {
      HOME: tmp.path,
      AGENT_BUS_DB: dbPath,
      AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9",
    };
    const result = await cli(["doctor", "--deep"], env);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /· Database\s+.*does not exist yet; it is created on first use/);
    assert.match(
      result.stdout,
      /· Resident bus\s+not running \(the next agent to start starts it; /,
    );
    await assert.rejects(Deno.stat(`${tmp.path}/new`), Deno.errors.NotFound);
  },
);
