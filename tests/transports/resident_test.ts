/**
 * The resident bus (`lib/transports/resident/`), with real processes: MCP
 * clients start entries as `install` writes them; the first starts the
 * bus, every entry attaches to it and relays its session; the agents hear
 * each other through it; `agent-bus bus status|stop` and `doctor` show it,
 * `bus stop` stops it; it ends by itself once idle, or once its socket is
 * gone; a usage error reaches the client's entry; only the user who owns
 * the bus can attach to it; and a bus killed under traffic is replaced
 * with nothing lost.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { cli } from "../_helpers/cli.ts";
import { inheritedEnv, MAIN, startPeer, until } from "../_helpers/peer.ts";
import { busStatus, checkoutOfVersion, killsUnderTraffic } from "../_helpers/resident.ts";
import { run } from "../_helpers/run.ts";
import { storeLocation } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { ENTRY_PATH } from "../../lib/launch.ts";

const onPostgres = Deno.env.get("AGENT_BUS_TEST_STORE") === "postgres";

/** Until the bus of `db` no longer runs (its process gone too). */
async function gone(db: string, pid: number) {
  await until(async () => !(await busStatus(db)).running, {
    timeoutMs: 30_000,
    what: "the bus ends",
  });
  await exited(pid, "the bus process exits");
}

/** Until process `pid` is gone. */
async function exited(pid: number, what: string) {
  await until(() => {
    try {
      Deno.kill(pid, "SIGCONT");
      return false;
    } catch {
      return true;
    }
  }, { timeoutMs: 30_000, what });
}

/**
 * `count` entries attached to the resident bus of a fresh database in
 * `path` (the first starts it), with its idle time, and the bus's pid.
 */
async function residentPeers(path: string, count: number, idleMs = 60_000) {
  const db = `${path}/bus.sqlite`;
  const env = { AGENT_BUS_RESIDENT_IDLE_MS: String(idleMs) };
  const peers = await Promise.all(
    Array.from({ length: count }, () => startPeer({ dbPath: db, resident: true, env })),
  );
  const { pid, socket } = await busStatus(db, env);
  return { db, env, peers, pid: pid!, socket, peer: peers[0]! };
}

Deno.test({
  name: `16 entries started at once attach to one resident bus, and its agents hear each other`,
  async fn() {
    await using tmp = await tmpDir();
    const { db, env, peers } = await residentPeers(tmp.path, 16);
    try {
      const bus = await busStatus(db, env);
      assert.equal(bus.running, true);
      assert.equal(
        bus.sessions,
        16,
        `every entry is a session of the one bus:\n${peers.map((p) => p.stderr()).join("")}`,
      );
      for (const peer of peers) assert.notEqual(peer.pid, bus.pid, "the entries only relay");
      // (On PostgreSQL the bus lives in HOME: it stays the user's.)
      const home: Record<string, string> = onPostgres ? {} : { HOME: tmp.path };
      const doctor = await cli(["doctor", "--json"], { AGENT_BUS_DB: db, ...home, ...env });
      const findings = JSON.parse(doctor.stdout).findings as { check: string; detail: string }[];
      assert.match(
        findings.find((f) => f.check === "Resident bus")?.detail ?? "",
        new RegExp(`^pid ${bus.pid}, agent-bus .*, 16 sessions`),
      );

      const [a, b] = peers as [typeof peers[0], typeof peers[0]];
      const { topic_id } = await a.ok("topic_create", { name: "resident" });
      await a.ok("topic_join", { agent_name: "alice", topic_id });
      await b.ok("topic_join", { agent_name: "bob", topic_id });
      const waiting = b.call("sync", { topic_id, wait_seconds: 30 });
      await a.ok("sync", {
        topic_id,
        outbox: [{ content_markdown: "through the bus" }],
        wait_seconds: 0,
      });
      const woke = (await waiting).structuredContent as {
        received: { content_markdown: string }[];
      };
      assert.deepEqual(woke.received.map((m) => m.content_markdown), ["through the bus"]);

      // A name is one agent's across the bus's sessions, as across processes.
      const taken = await peers[2]!.fail("topic_join", { agent_name: "alice", topic_id });
      assert.equal(taken.code, "AGENT_NAME_IN_USE");
      const stopped = await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stdout, /Stopped the resident bus \(pid \d+, 16 sessions\)/);
      await gone(db, bus.pid!);
    } finally {
      await Promise.all(peers.map((peer) => peer.close()));
      await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
    }
  },
});

Deno.test({
  name:
    "two databases of one directory have a resident bus each: no agent is turned away, and bus stop ends only its own",
  ignore: onPostgres, // (a database URL's bus is named after the URL)
  async fn() {
    await using tmp = await tmpDir();
    const [first, second] = [`${tmp.path}/first.sqlite`, `${tmp.path}/second.sqlite`];
    await using a = await startPeer({ dbPath: first, resident: true });
    await using b = await startPeer({ dbPath: second, resident: true });
    try {
      const [busA, busB] = [await busStatus(first), await busStatus(second)];
      assert.notEqual(busA.socket, busB.socket);
      assert.notEqual(busA.pid, busB.pid);
      assert.equal(busA.sessions, 1, "the first database's agent is its bus's session");
      assert.equal(busB.sessions, 1, "so is the second's, not a server of its own");
      const stopped = await cli(["bus", "stop"], { AGENT_BUS_DB: second });
      assert.match(stopped.stdout, new RegExp(`Stopped the resident bus \\(pid ${busB.pid},`));
      await gone(second, busB.pid!);
      const still = await busStatus(first);
      assert.equal(still.pid, busA.pid, "the other database's bus runs on");
      assert.ok((await a.ok("topic_create", { name: "still served" })).topic_id);
    } finally {
      await a.close();
      await b.close();
      await cli(["bus", "stop"], { AGENT_BUS_DB: first });
    }
  },
});

Deno.test({
  name: `a resident bus with no session ends by itself after AGENT_BUS_RESIDENT_IDLE_MS`,
  async fn() {
    await using tmp = await tmpDir();
    const { db, env, peer, pid } = await residentPeers(tmp.path, 1, 300);
    await using _entry = peer; // (closed below; and if the test fails)
    await peer.ok("topic_create", { name: "short-lived" });
    await peer.close();
    await gone(db, pid);
    // The next entry starts a bus again, and the database kept what the first said.
    await using again = await startPeer({ dbPath: db, resident: true, env });
    const topics = (await again.ok("topic_list", {})).topics as { name: string }[];
    assert.deepEqual(topics.map((t) => t.name), ["short-lived"]);
    await again.close();
    await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
  },
});

Deno.test({
  name:
    `a resident bus whose socket is gone ends once it has no session, long before its idle time`,
  async fn() {
    await using tmp = await tmpDir();
    const { db, peer, pid, socket } = await residentPeers(tmp.path, 1, 600_000);
    await peer.close();
    await Deno.remove(socket); // (as when its directory is removed)
    await gone(db, pid);
  },
});

Deno.test({
  name: `an entry's usage error comes back from the bus: exit 2 and the reason`,
  async fn() {
    await using tmp = await tmpDir();
    const { db, env, peer, pid } = await residentPeers(tmp.path, 1, 300);
    await using _entry = peer; // (closed below; and if the test fails)
    const result = await run(Deno.execPath(), [
      "run",
      "-A",
      ENTRY_PATH,
      "--resident",
      "--profile",
      "nonsense",
    ], { AGENT_BUS_DB: storeLocation(db), ...env });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--profile must be one of/);
    assert.equal((await busStatus(db, env)).pid, pid, "served by the bus that runs");
    await peer.close();
    await gone(db, pid);
  },
});

Deno.test("an option no serve has is refused by the process itself: exit 2, usage, and no bus started", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { ...inheritedEnv(), AGENT_BUS_DB: storeLocation(db) };
  for (const entry of [ENTRY_PATH, MAIN]) {
    const result = await run(
      Deno.execPath(),
      ["run", "-A", entry, "--agent", "x", "--frobnicate"],
      env,
    );
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /Unknown option '--frobnicate'/);
    assert.match(result.stderr, /Usage:/);
  }
  assert.equal(
    (await busStatus(db)).running,
    false,
    "no bus was started for a serve that cannot run",
  );
});

Deno.test({
  name: `another user cannot attach to the resident bus`,
  ignore: Deno.uid() !== 0,
  async fn() {
    await using tmp = await tmpDir();
    const { db, peer, pid, socket } = await residentPeers(tmp.path, 1, 300);
    await using _entry = peer; // (closed below; and if the test fails)
    // `nobody`, with a Deno cache of its own, tries the socket.
    const cache = await Deno.makeTempDir();
    await Deno.chmod(cache, 0o777);
    const tried = await run("setpriv", [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      "--",
      Deno.execPath(),
      "eval",
      `try { await Deno.connect({ transport: "unix", path: ${JSON.stringify(socket)} }); ` +
      `console.log("attached"); } catch (e) { console.log(e.name); }`,
    ], { DENO_DIR: cache, HOME: cache });
    await Deno.remove(cache, { recursive: true });
    assert.equal(tried.stdout.trim(), "PermissionDenied", tried.stderr);
    assert.equal((await Deno.stat(socket)).mode! & 0o777, 0o600);
    await peer.close();
    await gone(db, pid);
  },
});

Deno.test({
  name:
    `the bus SIGKILLed 5 times under 4 agents' traffic: every call answered, as the same agent, nothing acknowledged lost or stored twice`,
  async fn() {
    await using tmp = await tmpDir();
    const { db, env, peers } = await residentPeers(tmp.path, 4);
    try {
      const { acknowledged, errors, stored } = await killsUnderTraffic(db, env, peers, {
        kills: 5,
        between: 8,
      });
      assert.deepEqual(errors, [], "every call was answered, none as a stranger");
      const kept = new Set(stored);
      assert.deepEqual(acknowledged.filter((c) => !kept.has(c)), [], "0 acknowledged lost");
      assert.equal(kept.size, stored.length, "nothing stored twice");
      assert.ok(acknowledged.length >= 40, `traffic went on (${acknowledged.length} acknowledged)`);
    } finally {
      await Promise.all(peers.map((peer) => peer.close()));
      await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
    }
  },
});

Deno.test("an entry's client hears what was wrong with the bus's settings, as from a server of its own", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_MAX_SYNC_ITEMS: "bogus", AGENT_BUS_RESIDENT_IDLE_MS: "300" };
  await using peer = await startPeer({ dbPath: db, resident: true, env });
  await until(() => peer.stderr().includes('AGENT_BUS_MAX_SYNC_ITEMS="bogus"'), {
    timeoutMs: 10_000,
    what: `the warning on the entry's stderr:\n${peer.stderr()}`,
  });
  assert.notEqual((await busStatus(db, env)).pid, peer.pid, "served by the bus");
  await peer.close();
});

Deno.test("the bus keeps its own log beside its socket, private, each line with its time; bus status names it", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_MAX_SYNC_ITEMS: "bogus", AGENT_BUS_RESIDENT_IDLE_MS: "300" };
  await using peer = await startPeer({ dbPath: db, resident: true, env });
  const { log, socket } = await busStatus(db, env);
  assert.equal(log, socket.replace(/\.sock$/, ".log"));
  let text = "";
  await until(async () => {
    text = await Deno.readTextFile(log).catch(() => "");
    return text.includes('AGENT_BUS_MAX_SYNC_ITEMS="bogus"');
  }, { timeoutMs: 10_000, what: "the bus's warning in its log" });
  assert.match(text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[agent-bus\] warn: /m);
  assert.equal((await Deno.stat(log)).mode! & 0o777, 0o600);
  const status = await cli(["bus", "status"], { AGENT_BUS_DB: db, ...env });
  assert.match(status.stdout, new RegExp(`^  log ${log.replaceAll(".", "\\.")}$`, "m"));
  await peer.close();
});

Deno.test("a bus with a short idle time waits for its first session (its starter may be slow to attach)", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_RESIDENT_IDLE_MS: "100" };
  await using bus = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "bus", "run"],
    // (The settings an entry of the test would have: a bus of others would refuse it.)
    clearEnv: true,
    env: { ...inheritedEnv(), AGENT_BUS_DB: storeLocation(db), ...env },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const said = await bus.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
  assert.match(said.value ?? "", /^listening /);
  // Ten idle times pass before anyone attaches (a starter on a busy machine).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal((await busStatus(db, env)).running, true, "still there for its first session");
  await using peer = await startPeer({ dbPath: db, resident: true, env });
  assert.equal((await busStatus(db, env)).pid, bus.pid, "and the entry attached to it");
  await peer.close();
  assert.equal((await bus.status).code, 0, "it ended by itself once idle after that");
});

Deno.test({
  name:
    "an entry attaches to the bus it starts however its database is named: unset (the default), or relative",
  ignore: onPostgres, // (a database URL is always spelled out)
  async fn() {
    await using tmp = await tmpDir();
    const home = `${tmp.path}/home`;
    await Deno.mkdir(home);
    // As a client configured by hand starts it: `env` unsets or sets the variable, then runs it.
    const spellings = [
      { db: `${home}/.agent_bus/agent_bus.sqlite`, set: ["-u", "AGENT_BUS_DB"] },
      { db: `${tmp.path}/relative.sqlite`, set: ["-C", tmp.path, "AGENT_BUS_DB=relative.sqlite"] },
    ];
    for (const { db, set } of spellings) {
      const env = { HOME: home, AGENT_BUS_RESIDENT_IDLE_MS: "300" };
      const entry = [Deno.execPath(), "run", "-A", ENTRY_PATH];
      await using peer = await startPeer({
        dbPath: db,
        env,
        resident: true,
        command: "env",
        args: [...set, ...entry],
      });
      await peer.ok("topic_create", { name: "spelled" });
      const bus = await busStatus(db, env);
      assert.equal(bus.sessions, 1, `the bus serves the entry's session (${set.join(" ")})`);
      assert.notEqual(bus.pid, peer.pid);
      assert.doesNotMatch(peer.stderr(), /Serving in this process/);
      await peer.close();
      await gone(db, bus.pid!);
    }
  },
});

Deno.test({
  name: "`deno task serve` (the README's first command) attaches to the resident bus, starting it",
  ignore: onPostgres, // (the task serves the default database)
  async fn() {
    await using tmp = await tmpDir();
    const home = `${tmp.path}/home`;
    await Deno.mkdir(home);
    const db = `${home}/.agent_bus/agent_bus.sqlite`;
    const env = { HOME: home, AGENT_BUS_RESIDENT_IDLE_MS: "300" };
    const config = fileURLToPath(new URL("../../deno.json", import.meta.url));
    const task = [Deno.execPath(), "task", "--quiet", "--config", config, "serve"];
    await using peer = await startPeer({
      dbPath: db,
      env,
      resident: true,
      command: "env",
      args: ["-u", "AGENT_BUS_DB", ...task],
    });
    await peer.ok("topic_create", { name: "from the task" });
    const bus = await busStatus(db, env);
    assert.equal(bus.sessions, 1, `the bus serves the task's session:\n${peer.stderr()}`);
    assert.doesNotMatch(peer.stderr(), /Serving in this process/);
    await peer.close();
    await gone(db, bus.pid!);
  },
});

Deno.test({
  name:
    "an entry of another version never talks to the bus that runs: it starts one of its own in its place, the old one serves its sessions to their end and then ends",
  async fn() {
    await using tmp = await tmpDir();
    const { db, env, peer: older, pid } = await residentPeers(tmp.path, 1, 300);
    const { topic_id } = await older.ok("topic_create", { name: "across versions" });
    await older.ok("topic_join", { topic_id, agent_name: "older" });
    const entry = await checkoutOfVersion(`${tmp.path}/upgraded`, "99.0.0");
    await using newer = await startPeer({
      dbPath: db,
      env,
      resident: true,
      command: Deno.execPath(),
      args: ["run", "-A", entry],
    });
    await newer.ok("topic_join", { topic_id, agent_name: "newer" });
    const upgraded = await busStatus(db, env);
    assert.equal(upgraded.version, "99.0.0", "the socket is the new version's bus");
    assert.notEqual(upgraded.pid, pid);
    assert.equal(upgraded.sessions, 1, "whose one session is the newer entry's");
    // The two agents, on two buses, still hear each other (through the database).
    await newer.ok("sync", {
      topic_id,
      outbox: [{ content_markdown: "from the newer" }],
      wait_seconds: 0,
    });
    const heard = await older.ok("sync", { topic_id, wait_seconds: 10 });
    assert.deepEqual(
      (heard.received as { content_markdown: string }[]).map((m) => m.content_markdown),
      ["from the newer"],
    );
    await older.close();
    await exited(pid, "the old bus ends once its last session is gone");
    await newer.close();
    await gone(db, upgraded.pid!);
  },
});

Deno.test("an entry of other settings, turned away, is counted: bus status and doctor say so", async () => {
  await using tmp = await tmpDir();
  const { db, env, peer } = await residentPeers(tmp.path, 1, 300);
  await using _entry = peer; // (the bus's own session)
  const other = { ...env, AGENT_BUS_LOG_LEVEL: "info" };
  await using apart = await startPeer({ dbPath: db, resident: true, env: other });
  await apart.ok("topic_create", { name: "served apart" });
  assert.match(apart.stderr(), /Serving in this process: .*other AGENT_BUS_\* settings/);
  const bus = await busStatus(db, env);
  assert.equal(bus.sessions, 1, "the bus serves its own agent only");
  assert.equal(bus.turned_away?.count, 1);
  const status = await cli(["bus", "status"], { AGENT_BUS_DB: db, ...env });
  assert.match(
    status.stdout,
    /^ {2}turned away 1 entry of other AGENT_BUS_\* settings, the last at /m,
  );
  const doctor = await cli(["doctor"], { AGENT_BUS_DB: db, ...env });
  assert.match(
    doctor.stdout,
    /⚠ Resident bus .*turned away 1 entry of other AGENT_BUS_\* settings/,
  );
  assert.match(doctor.stdout, /fix: give every agent the same AGENT_BUS_\* settings/);
});
