/**
 * The command line: version, help, usage errors and `db wipe`.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { cli, cliProcess } from "../_helpers/cli.ts";
import { sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import denoJson from "../../deno.json" with { type: "json" };

const COMMANDS = [
  "topics",
  "watch",
  "post",
  "export",
  "search",
  "mail",
  "http",
  "install",
  "uninstall",
  "doctor",
  "db",
];

Deno.test("the program prints its version and exits with main()'s code", async () => {
  const result = await cliProcess(["--version"]);
  assert.equal(result.code, 0);
  assert.equal(result.stdout.trim(), `agent-bus ${denoJson.version}`);
  const usage = await cliProcess(["frobnicate"]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /Unknown command "frobnicate"/);
});

Deno.test("agent-bus --help lists the commands and the environment", async () => {
  const result = await cli(["--help"]);
  assert.equal(result.code, 0);
  for (
    const command of COMMANDS
  ) {
    assert.match(result.stdout, new RegExp(`^  ${command} `, "m"), command);
  }
  assert.match(result.stdout, /AGENT_BUS_DB/);
  assert.match(result.stdout, /--role teacher\|student/);
});

Deno.test("agent-bus with an unknown option or command exits 2 with usage", async () => {
  for (
    const args of [["--frobnicate"], ["frobnicate"], ["topics", "frobnicate"], [
      "topics",
      "list",
      "--nope",
    ]]
  ) {
    const result = await cli(args);
    assert.equal(result.code, 2, args.join(" "));
    assert.match(result.stderr, /Usage:/, args.join(" "));
  }
});

Deno.test("a command group given no command, or one it lacks, names the commands its usage lists", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/never.sqlite`;
  for (const group of ["topics", "mail", "db", "bus"]) {
    const none = await cli([group], { AGENT_BUS_DB: db });
    assert.equal(none.code, 2, group);
    const named = new RegExp(
      `^${group} needs a command: ([a-z-]+(?:, [a-z-]+)*) or ([a-z-]+)$`,
      "m",
    )
      .exec(none.stderr);
    assert.ok(named, `${group}: ${none.stderr}`);
    const usage = (await cli([group, "--help"])).stdout;
    for (const command of [...named[1]!.split(", "), named[2]!]) {
      assert.match(usage, new RegExp(`^  ${command}\\b`, "m"), `${group} ${command}`);
    }
    const unknown = await cli([group, "frobnicate"], { AGENT_BUS_DB: db });
    assert.equal(unknown.code, 2, group);
    assert.match(unknown.stderr, new RegExp(`Unknown ${group} command "frobnicate": it has `));
  }
  const created = await Deno.stat(db).then(() => true, () => false);
  assert.equal(created, false, "a mistyped command created no database");
});

Deno.test("every command has its own --help", async () => {
  for (
    const command of COMMANDS
  ) {
    const result = await cli([command, "--help"]);
    assert.equal(result.code, 0, command);
    assert.match(result.stdout, new RegExp(`^Usage: agent-bus ${command}`), command);
  }
});

sqliteTest(
  "agent-bus db wipe --yes removes the database and its WAL files",
  "removes SQLite files; wiping PostgreSQL is in tests/store/postgres_store_test.ts",
  async () => {
    await using tmp = await tmpDir();
    const path = `${tmp.path}/bus.sqlite`;
    const db = new DatabaseSync(path);
    db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    const refused = await cli(["db", "wipe"], { AGENT_BUS_DB: path });
    assert.equal(refused.code, 2, "without --yes and without a terminal it refuses");
    await Deno.stat(path);
    const wiped = await cli(["db", "wipe", "--yes"], { AGENT_BUS_DB: path });
    db.close();
    assert.equal(wiped.code, 0, wiped.stderr);
    assert.match(wiped.stdout, /Wiped/);
    for (const suffix of ["", "-wal", "-shm"]) {
      await assert.rejects(Deno.stat(`${path}${suffix}`), Deno.errors.NotFound);
    }
    const again = await cli(["db", "wipe", "--yes"], { AGENT_BUS_DB: path });
    assert.equal(again.code, 0);
    assert.match(again.stdout, /nothing to wipe/);
  },
);
