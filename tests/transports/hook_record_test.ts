/**
 * The hook's record (`hooks.log`): where it goes for each store, that it
 * stays under its bound with the lines before kept in `hooks.log.1`, and
 * that only its owner can read it.
 */

import assert from "node:assert/strict";
import {
  MAX_RECORD_BYTES,
  RECORD_FILE,
  recordDir,
  writeRecord,
} from "../../lib/transports/hook/record.ts";
import type { HookTrace } from "../../lib/transports/hook/answer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const trace: HookTrace = {
  client: "gemini",
  event: "AfterAgent",
  session: "s1",
  sessions: ["abc"],
  matchedBy: "working directory",
  removed: 0,
  first: [],
  last: ["t:x:gemini:3"],
  lastLookAt: new Date().toISOString(),
  blocks: 0,
  reported: [],
  decision: "block",
  why: "new unread",
};

Deno.test("the hook's record: beside the SQLite file, in ~/.agent_bus for PostgreSQL, none in memory", () => {
  assert.equal(recordDir("/srv/bus/agent_bus.sqlite", undefined), "/srv/bus");
  assert.equal(recordDir("postgres://bus@db.internal/bus", "/home/me"), "/home/me/.agent_bus");
  assert.equal(recordDir("postgres://bus@db.internal/bus", undefined), undefined);
  assert.equal(recordDir(":memory:", "/home/me"), undefined);
});

Deno.test("the hook's record stays under its bound, keeps the lines before in hooks.log.1, and is 0600", async () => {
  await using tmp = await tmpDir();
  const line = JSON.stringify({ ...trace, reported: ["x".repeat(1000)] }).length;
  const runs = Math.ceil((MAX_RECORD_BYTES * 1.5) / line);
  for (let i = 0; i < runs; i++) {
    writeRecord(tmp.path, { ...trace, reported: ["x".repeat(1000)] }, false);
  }
  const current = await Deno.stat(`${tmp.path}/${RECORD_FILE}`);
  const previous = await Deno.stat(`${tmp.path}/${RECORD_FILE}.1`);
  assert.ok(current.size < MAX_RECORD_BYTES, `${current.size} bytes`);
  assert.ok(previous.size >= MAX_RECORD_BYTES && previous.size < MAX_RECORD_BYTES + 2 * line);
  if (Deno.build.os !== "windows") assert.equal(current.mode! & 0o777, 0o600);
  const last = (await Deno.readTextFile(`${tmp.path}/${RECORD_FILE}`)).trim().split("\n").at(-1)!;
  assert.equal(JSON.parse(last).why, "new unread");
  // A directory that cannot be written is skipped: the hook never fails on its record.
  writeRecord(`${tmp.path}/missing/dir`, trace, false);
});
