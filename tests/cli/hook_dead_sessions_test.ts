/**
 * Session records of servers that are gone are removed by whoever notices
 * first, and no hook acts on them: a server killed with SIGKILL (its record
 * stays), a record whose pid now belongs to a later process, and, on other
 * hosts, records their server stopped refreshing.
 */

import assert from "node:assert/strict";
import { processPlace, SESSION_EXPIRY_SECONDS, SessionRecord } from "../../lib/bus/attendance.ts";
import { sessionsOnHost } from "../../lib/store/sessions.ts";
import { cli } from "../_helpers/cli.ts";
import { openTestBus, type TestBus } from "../_helpers/bus.ts";
import { hookShell, spawnHook } from "../_helpers/hook.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const sessions = (bus: TestBus, host = processPlace().host) =>
  bus.store.read(() => sessionsOnHost(bus.store, host));

/** Run the Stop hook as this process's child, in `cwd`; its answer and record. */
async function stopHook(db: string, cwd: string) {
  const run = await spawnHook(
    `AGENT_BUS_LOG_LEVEL=debug ${hookShell(db, { client: "claude-code", event: "Stop" })}`,
    { session_id: "s", cwd, hook_event_name: "Stop", stop_hook_active: false },
  );
  assert.equal(run.code, 0, run.stderr);
  const line = run.stderr.split("\n").find((l) => l.startsWith("agent-bus hook: {"));
  assert.ok(line, run.stderr);
  return { out: JSON.parse(run.stdout), record: JSON.parse(line.slice("agent-bus hook: ".length)) };
}

Deno.test("a server killed with SIGKILL leaves its record; the next hook removes it and does not act on it", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  await using bus = openTestBus(db);
  // (A server of its own: an entry killed on the resident bus is a client gone, whose session the
  // bus ends and unrecords at once.)
  const peer = await startPeer({ dbPath: db, resident: false });
  const topic = await peer.ok("topic_create", { name: "gone" }) as { topic_id: string };
  await peer.ok("topic_join", { topic_id: topic.topic_id, agent_name: "claude" });
  assert.equal(sessions(bus).length, 1);
  peer.kill("SIGKILL");
  await peer.close();
  assert.equal(sessions(bus).length, 1, "SIGKILL left the record");
  const posted = await cli(["post", "gone", "for a dead session", "--as", "codex"], {
    AGENT_BUS_DB: db,
  });
  assert.equal(posted.code, 0, posted.stderr);

  // The hook runs where the dead server ran, from the process that was its client.
  const { out, record } = await stopHook(db, Deno.cwd());
  assert.deepEqual(out, {}, "no stop is held for a server that is gone");
  assert.equal(record.removed, 1);
  assert.deepEqual(sessions(bus), []);
});

Deno.test("a record whose pid now belongs to a process started after it is a dead server's", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  // A process that runs now, started after the record below was made (an hour ago).
  const later = new Deno.Command("sleep", { args: ["60"], stdout: "null", stderr: "null" }).spawn();
  try {
    {
      await using past = openTestBus(db, {}, { now: () => Date.now() / 1000 - 3600 });
      await SessionRecord.open(past, {
        profile: "peer",
        agent: undefined,
        place: { ...processPlace(), pid: later.pid, parentPid: Deno.pid },
      });
    }
    await using bus = openTestBus(db);
    assert.equal(sessions(bus).length, 1);
    const { record } = await stopHook(db, Deno.cwd());
    assert.equal(record.removed, 1, "the pid was reused: not the server that made the record");
    assert.deepEqual(record.sessions, []);
    assert.deepEqual(sessions(bus), []);
  } finally {
    later.kill();
    await later.status;
  }
});

Deno.test("records of other hosts' servers that stopped refreshing them expire: a server starting removes them", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  // Made in the order that keeps both: each server removes records older than its own time allows.
  {
    await using fresh = openTestBus(db, {}, { now: () => Date.now() / 1000 - 60 });
    await SessionRecord.open(fresh, {
      profile: "peer",
      agent: undefined,
      place: { host: "other-host", pid: 4343, parentPid: 4341, cwd: "/srv/agent" },
    });
    await using stale = openTestBus(db, {}, {
      now: () => Date.now() / 1000 - SESSION_EXPIRY_SECONDS - 600,
    });
    await SessionRecord.open(stale, {
      profile: "peer",
      agent: undefined,
      place: { host: "other-host", pid: 4242, parentPid: 4241, cwd: "/srv/agent" },
    });
  }
  await using bus = openTestBus(db);
  assert.equal(sessions(bus, "other-host").length, 2);
  const record = await SessionRecord.open(bus, { profile: "peer", agent: undefined });
  assert.deepEqual(
    sessions(bus, "other-host").map((row) => row.server_pid),
    [4343],
    "the record not refreshed for the expiry is gone, the other kept",
  );
  await record!.close();
});
