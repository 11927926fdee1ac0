/**
 * The resident bus by URL (`agent-bus bus start`), with real processes: a
 * client of Streamable HTTP that shows the bus's token is served by the
 * same bus as the entries (one process, one set of agents: they hear each
 * other); without the token, or from a page of another host, it is refused;
 * the token is kept 0600 and stays the same across buses; a bus that
 * serves a URL does not end when idle, and `bus stop` ends it.
 */

import assert from "node:assert/strict";
import { cli } from "../_helpers/cli.ts";
import { connectHttp, rawStatus } from "../_helpers/http.ts";
import { inheritedEnv, MAIN, startPeer, until } from "../_helpers/peer.ts";
import { busStatus } from "../_helpers/resident.ts";
import { storeLocation } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** What `bus start --json` says. */
interface Started {
  pid: number;
  url: string;
  token_file: string;
  http_sessions: number;
}

/**
 * `agent-bus bus start --port 0 --json` for `db`, run as a user would (a
 * process with the settings an entry of the test has).
 */
async function busStart(db: string, env: Record<string, string>, args = ["--port", "0"]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "bus", "start", "--json", ...args],
    clearEnv: true,
    env: { ...inheritedEnv(), AGENT_BUS_DB: storeLocation(db), ...env },
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** Start the bus of `db` serving a URL, and the token its clients show. */
async function started(db: string, env: Record<string, string>) {
  const result = await busStart(db, env);
  assert.equal(result.code, 0, result.stderr);
  const bus = JSON.parse(result.stdout) as Started;
  const token = (await Deno.readTextFile(bus.token_file)).trim();
  return { bus, token, auth: { Authorization: `Bearer ${token}` } };
}

Deno.test("a client by URL and an entry's client are agents of one resident bus, and hear each other", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_RESIDENT_IDLE_MS: "60000" };
  const { bus, token, auth } = await started(db, env);
  try {
    assert.match(bus.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.equal((await Deno.stat(bus.token_file)).mode! & 0o777, 0o600, "only its owner reads it");
    assert.match(token, /^[0-9a-f]{64}$/);

    await using entry = await startPeer({ dbPath: db, resident: true, env });
    await using web = await connectHttp(bus.url, { headers: auth });
    const status = await busStatus(db, env);
    assert.equal(status.pid, bus.pid, "the entry attached to the bus that serves the URL");
    assert.equal(status.sessions, 1);

    const { topic_id } = await web.ok("topic_create", { name: "by-url" });
    await web.ok("topic_join", { agent_name: "web", topic_id });
    await entry.ok("topic_join", { agent_name: "entry", topic_id });
    const taken = await entry.fail("topic_join", { agent_name: "web", topic_id });
    assert.equal(taken.code, "AGENT_NAME_IN_USE", "one set of names across both");

    const waiting = web.call("sync", { topic_id, wait_seconds: 30 });
    await entry.ok("sync", {
      topic_id,
      outbox: [{ content_markdown: "from the entry" }],
      wait_seconds: 0,
    });
    const woke = (await waiting).structuredContent as { received: { content_markdown: string }[] };
    assert.deepEqual(woke.received.map((m) => m.content_markdown), ["from the entry"]);

    const back = entry.call("sync", { topic_id, wait_seconds: 30 });
    await web.ok("sync", { topic_id, outbox: [{ content_markdown: "by URL" }], wait_seconds: 0 });
    const heard = (await back).structuredContent as { received: { content_markdown: string }[] };
    assert.deepEqual(heard.received.map((m) => m.content_markdown), ["by URL"]);

    // Without the token, with another, or from a page of another host: refused.
    const post = (headers: Record<string, string>) =>
      fetch(bus.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ tool: "topic_list", args: {} }),
      }).then(async (response) => (await response.body?.cancel(), response.status));
    assert.equal(await post({}), 401);
    assert.equal(await post({ Authorization: `Bearer ${"0".repeat(64)}` }), 401);
    assert.equal(await post(auth), 200);
    const port = Number(new URL(bus.url).port);
    const rebinding = await rawStatus(port, {
      method: "POST",
      path: "/mcp",
      host: "evil.example.com",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ tool: "topic_list", args: {} }),
    });
    assert.equal(rebinding, 403);

    // Asked again, the same bus and URL; asked for another port, it says which it serves.
    const again = await busStart(db, env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal((JSON.parse(again.stdout) as Started).url, bus.url);
    const moved = await busStart(db, env, ["--port", String(port === 65535 ? 1 : port + 1)]);
    assert.equal(moved.code, 1);
    assert.match(moved.stderr, /this bus serves http:\/\/127\.0\.0\.1:\d+\/mcp/);

    const shown = await cli(["bus", "status"], { AGENT_BUS_DB: db, ...env });
    assert.match(
      shown.stdout,
      new RegExp(`url ${bus.url.replaceAll(".", "\\.")} \\(1 session\\)`),
    );
  } finally {
    await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
  }
});

Deno.test("a bus that serves a URL does not end when idle; `bus stop` ends it, and the next serves the same token", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_RESIDENT_IDLE_MS: "100" };
  const first = await started(db, env);
  try {
    // An entry comes and goes, then ten idle times pass with no session at all.
    const entry = await startPeer({ dbPath: db, resident: true, env });
    await entry.ok("topic_create", { name: "came and went" });
    await entry.close();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const status = await busStatus(db, env);
    assert.equal(status.pid, first.bus.pid, "still there, serving its URL");
    await using web = await connectHttp(first.bus.url, { headers: first.auth });
    const topics = await web.ok("topic_list", {});
    assert.equal((topics.topics as unknown[]).length, 1);
    await web.close();

    const stopped = await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
    assert.equal(stopped.code, 0, stopped.stderr);
    await until(
      () =>
        fetch(first.bus.url, { method: "POST" }).then(
          async (response) => (await response.body?.cancel(), false),
          () => true,
        ),
      { timeoutMs: 30_000, what: "the URL is no longer served" },
    );

    const second = await started(db, env);
    assert.notEqual(second.bus.pid, first.bus.pid);
    assert.equal(second.token, first.token, "installed clients keep working");
  } finally {
    await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
  }
});

Deno.test("bus start run in process with settings of its own starts a bus of those settings", async () => {
  await using tmp = await tmpDir();
  const env = { AGENT_BUS_DB: `${tmp.path}/bus.sqlite`, AGENT_BUS_MAX_SYNC_ITEMS: "7" };
  try {
    const result = await cli(["bus", "start", "--port", "0", "--json"], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match((JSON.parse(result.stdout) as Started).url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  } finally {
    await cli(["bus", "stop"], env);
  }
});

Deno.test("bus run --port serves the URL from the start (a service manager's bus); a port taken is said", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_RESIDENT_IDLE_MS: "100" };
  const command = (port: string, stderr: "piped" | "null") =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "bus", "run", "--port", port],
      clearEnv: true,
      env: { ...inheritedEnv(), AGENT_BUS_DB: storeLocation(db), ...env },
      stdout: "piped",
      stderr,
    });
  await using bus = command("0", "null").spawn();
  const said = await bus.stdout.pipeThrough(new TextDecoderStream()).getReader().read();
  assert.match(said.value ?? "", /^listening /);
  const { url } = await busStatus(db, env) as { url?: string };
  assert.match(url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
  assert.equal((await bus.status).code, 0);

  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const refused = await command(String(taken.addr.port), "piped").output();
  assert.notEqual(refused.code, 0);
  assert.match(new TextDecoder().decode(refused.stderr), /port \d+ of 127\.0\.0\.1 is taken/);
  assert.equal((await busStatus(db, env)).running, false, "and no bus was left behind");
});

Deno.test("a bus killed while it serves a URL: the bus an entry starts in its place serves it again; after bus stop, none does", async () => {
  await using tmp = await tmpDir();
  const db = `${tmp.path}/bus.sqlite`;
  const env = { AGENT_BUS_RESIDENT_IDLE_MS: "60000" };
  const { bus, auth } = await started(db, env);
  try {
    await using entry = await startPeer({ dbPath: db, resident: true, env });
    const { topic_id } = await entry.ok("topic_create", { name: "before the kill" });
    Deno.kill(bus.pid, "SIGKILL");
    // The entry's next call carries its session on to a new bus, which it starts.
    await entry.ok("topic_list", {});
    const after = await busStatus(db, env) as { pid?: number; url?: string | null };
    assert.notEqual(after.pid, bus.pid);
    assert.equal(after.url, bus.url, "the same URL, served again");
    await using web = await connectHttp(bus.url, { headers: auth });
    const listed = await web.ok("topic_list", {});
    assert.deepEqual((listed.topics as { topic_id: string }[]).map((t) => t.topic_id), [topic_id]);
    await web.close();

    const stopped = await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
    assert.equal(stopped.code, 0, stopped.stderr);
    // (Its sessions ended with it: a new entry starts the next bus.)
    await using next = await startPeer({ dbPath: db, resident: true, env });
    await next.ok("topic_list", {});
    const again = await busStatus(db, env) as { pid?: number; url?: string | null };
    assert.notEqual(again.pid, after.pid);
    assert.equal(again.url, null, "stopped on purpose: no URL until bus start");
  } finally {
    await cli(["bus", "stop"], { AGENT_BUS_DB: db, ...env });
  }
});
