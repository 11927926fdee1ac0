/**
 * Only the user who owns the bus can read it: a real server creates the
 * bus's directory 0700 and every file in it 0600 (database, WAL, shared
 * memory, lock), narrows files that others could read again whenever it
 * opens them, and `doctor` warns (with the fix) about what is still wider.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { cli } from "../_helpers/cli.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const ignore = Deno.build.os === "windows";

function modeOf(path: string): string {
  return (Deno.statSync(path).mode! & 0o777).toString(8);
}

Deno.test({
  name: "a new bus's directory is 0700 and its database, WAL, shared memory and lock are 0600",
  ignore,
}, async () => {
  await using tmp = await tmpDir();
  const dir = `${tmp.path}/home/.agent_bus`;
  const dbPath = `${dir}/agent_bus.sqlite`;
  await using peer = await startPeer({ dbPath });
  const { topic_id } = await peer.ok("topic_create", { name: "private" });
  await peer.ok("topic_join", { agent_name: "a", topic_id });
  await peer.ok("sync", {
    topic_id,
    outbox: [{ content_markdown: "only for me" }],
    wait_seconds: 0,
  });
  assert.equal(modeOf(dir), "700");
  for (const suffix of ["", "-wal", "-shm", "-lock"]) {
    assert.equal(modeOf(`${dbPath}${suffix}`), "600", `agent_bus.sqlite${suffix}`);
  }
  const doctor = await cli(["doctor"], { AGENT_BUS_DB: dbPath });
  assert.doesNotMatch(doctor.stdout, /Privacy/);
});

Deno.test({
  name: "files others could read are narrowed when the bus opens them; doctor names the directory",
  ignore,
}, async () => {
  await using tmp = await tmpDir();
  const dir = `${tmp.path}/.agent_bus`;
  await Deno.mkdir(dir, { mode: 0o755 });
  await Deno.chmod(dir, 0o755);
  const dbPath = `${dir}/agent_bus.sqlite`;
  // A bus an older agent-bus (or a careless copy) left readable by everyone.
  const old = new DatabaseSync(dbPath);
  old.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1)");
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      await Deno.chmod(`${dbPath}${suffix}`, 0o644);
    } catch { /* not there */ }
  }
  old.close();
  await Deno.chmod(dbPath, 0o644);
  const before = await cli(["doctor"], { AGENT_BUS_DB: dbPath });
  assert.match(
    before.stdout,
    /⚠ Privacy\s+other users of this machine can read what agents said: .*\.agent_bus is 0755, .*agent_bus\.sqlite is 0644/,
  );
  assert.match(before.stdout, /fix: chmod 700 .*\.agent_bus && chmod 600 .*agent_bus\.sqlite/);

  await Deno.remove(dbPath);
  await Deno.writeFile(dbPath, new Uint8Array(), { mode: 0o644 });
  await Deno.chmod(dbPath, 0o644);
  await using peer = await startPeer({ dbPath });
  await peer.ok("topic_create", { name: "reopened" });
  assert.equal(modeOf(dbPath), "600");
  assert.equal(modeOf(`${dbPath}-wal`), "600");
  // The directory it did not make is left as it is; doctor says so.
  assert.equal(modeOf(dir), "755");
  const after = await cli(["doctor"], { AGENT_BUS_DB: dbPath });
  assert.match(after.stdout, /⚠ Privacy\s+.*\.agent_bus is 0755\n\s+fix: chmod 700 /);
  assert.doesNotMatch(after.stdout, /agent_bus\.sqlite is/);
});
