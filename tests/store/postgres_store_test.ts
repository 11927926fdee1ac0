/**
 * The PostgreSQL store when things go wrong, against a real server of its
 * own (restarted, stopped, shared by two HTTP nodes, a node killed): no
 * acknowledged message is lost, waiters resume, errors are clear and the
 * password never shows. Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import postgres from "postgres";
import { FTS_NUMBERS_FROM } from "../../lib/store/postgres/schema.ts";
import { cli, cliProcess } from "../_helpers/cli.ts";
import { connectHttp, startHttpServer } from "../_helpers/http.ts";
import { readTopic, startPeer, textOf, until } from "../_helpers/peer.ts";
import { postgresBin, startPostgres } from "../_helpers/postgres.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const bin = await postgresBin();
const ignore = "unavailable" in bin;
/** The test's name, saying why it is skipped where it is. */
const named = (name: string) => ignore ? `${name} (skipped: ${bin.unavailable})` : name;

type Sent = { message: { message_id: string; seq: number }; duplicate: boolean };

Deno.test({
  name: named(
    "PostgreSQL restarted mid-traffic: no acknowledged message lost, a waiting sync resumes",
  ),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  await using a = await startPeer({ dbPath: pg.url });
  await using b = await startPeer({ dbPath: pg.url });
  const topic = await a.ok("topic_create", { name: "restart" });
  await a.ok("topic_join", { agent_name: "sender", topic_id: topic.topic_id });
  await b.ok("topic_join", { agent_name: "waiter", topic_id: topic.topic_id });

  const acknowledged: string[] = [];
  const errors: string[] = [];
  let sending = true;
  const sender = (async () => {
    for (let i = 0; sending; i++) {
      const result = await a.call("sync", {
        topic_id: topic.topic_id,
        outbox: [{ content_markdown: `m${i}`, client_message_id: `c${i}` }],
        wait_seconds: 0,
      });
      if (result.isError) {
        errors.push(JSON.stringify(result.structuredContent));
        await new Promise((resolve) => setTimeout(resolve, 20));
      } else {
        const sent = (result.structuredContent as { sent: Sent[] }).sent;
        acknowledged.push(...sent.map((s) => s.message.message_id));
      }
    }
  })();
  await until(() => acknowledged.length >= 20, { what: "traffic before the restart" });
  const restarting = performance.now();
  await pg.stop("immediate");
  await pg.start();
  const restartMs = performance.now() - restarting;
  const before = acknowledged.length;
  await until(() => acknowledged.length >= before + 20, {
    timeoutMs: 30_000,
    what: "traffic after the restart",
  });
  sending = false;
  await sender;
  // Calls made during the restart wait for it; only the one whose COMMIT was cut may fail, and
  // says that its outcome is unknown (its client_message_id makes the retry safe).
  // (A restart slower than the grace, 5 s, fails calls as an outage does.)
  const unknown = errors.filter((e) => e.includes('"outcome":"unknown"'));
  assert.ok(
    restartMs >= 4000 || (unknown.length <= 1 && errors.length === unknown.length),
    `calls during a restart of ${restartMs.toFixed(0)} ms waited for it: ${errors.slice(0, 3)}`,
  );
  assert.ok(errors.every((e) => e.includes("DB_UNAVAILABLE")), `${errors.slice(0, 3)}`);

  const seen = (await readTopic(b, topic.topic_id)).map((m) => m.message_id);
  const stored = new Set(seen);
  assert.deepEqual(acknowledged.filter((id) => !stored.has(id)), [], "every acknowledged message");
  assert.equal(stored.size, seen.length, "no message twice");
  // A sync that waits with nothing new wakes for the next message.
  const waiting = b.ok("sync", { topic_id: topic.topic_id, wait_seconds: 20 });
  await new Promise((resolve) => setTimeout(resolve, 200));
  await a.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "wake" }],
    wait_seconds: 0,
  });
  const woke = await waiting;
  assert.equal(woke.status, "ready");
  assert.equal((woke.received as { content_markdown: string }[])[0]!.content_markdown, "wake");
});

Deno.test({
  name: named(
    "PostgreSQL down: DB_UNAVAILABLE without the password, ping works, recovery without a restart",
  ),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  // A password in the URL (the server trusts loopback, so any password works).
  const url = pg.url.replace("bus@", "bus:hunter2@");
  await using peer = await startPeer({ dbPath: url });
  await peer.ok("topic_create", { name: "before" });
  await pg.stop("fast");
  const down = await peer.fail("topic_create", { name: "during" });
  assert.equal(down.code, "DB_UNAVAILABLE");
  assert.doesNotMatch(down.message, /hunter2/);
  assert.match(down.message, /bus:\*\*\*@127\.0\.0\.1/);
  assert.equal((await peer.ok("ping")).ok, true, "ping needs no database");
  await pg.start();
  await until(async () => !(await peer.call("topic_list", {})).isError, {
    timeoutMs: 15_000,
    what: "recovery",
  });
  const names = ((await peer.ok("topic_list", {})).topics as { name: string }[]).map((t) => t.name);
  assert.deepEqual(names, ["before"]);
  assert.doesNotMatch(peer.stderr(), /hunter2/, "nor in the log");
});

Deno.test({
  name: named("a call made while PostgreSQL restarts waits for it instead of failing"),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  await using peer = await startPeer({ dbPath: pg.url });
  await peer.ok("topic_create", { name: "before" });
  await pg.stop("fast");
  const during = peer.call("topic_create", { name: "during" });
  const restarting = performance.now();
  await pg.start();
  const restartMs = performance.now() - restarting;
  const result = await during;
  // A restart slower than the grace (5 s) may fail the call, as a real outage does.
  if (restartMs < 4000) {
    assert.ok(!result.isError, `restart took ${restartMs.toFixed(0)} ms: ${textOf(result)}`);
  }
  const names = ((await peer.ok("topic_list", {})).topics as { name: string }[]).map((t) => t.name);
  assert.deepEqual(names.sort(), result.isError ? ["before"] : ["before", "during"]);
});

Deno.test({
  name: named(
    "two agent-bus http nodes on one database: a sync waiting on one wakes for a send on the other",
  ),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  await using one = await startHttpServer({ dbPath: pg.url });
  await using two = await startHttpServer({ dbPath: pg.url });
  await using sender = await connectHttp(`${one.url}/mcp`);
  await using receiver = await connectHttp(`${two.url}/mcp`);
  const topic = await sender.ok("topic_create", { name: "across-nodes" });
  await sender.ok("topic_join", { agent_name: "on-one", topic_id: topic.topic_id });
  await receiver.ok("topic_join", { agent_name: "on-two", topic_id: topic.topic_id });
  const waiting = receiver.ok("sync", { topic_id: topic.topic_id, wait_seconds: 20 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = performance.now();
  await sender.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "from node one" }],
    wait_seconds: 0,
  });
  const got = await waiting;
  assert.ok(performance.now() - started < 15_000, "woken by the commit, not by the timeout");
  assert.equal(got.status, "ready");
  assert.equal((got.received as { sender: string }[])[0]!.sender, "on-one");
});

Deno.test({
  name: named("a node killed with SIGKILL mid-send loses no acknowledged message"),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  const node = await startPeer({ dbPath: pg.url });
  const topic = await node.ok("topic_create", { name: "killed" });
  await node.ok("topic_join", { agent_name: "victim", topic_id: topic.topic_id });
  const acknowledged: string[] = [];
  const sender = (async () => {
    for (let i = 0;; i++) {
      try {
        const result = await node.ok("sync", {
          topic_id: topic.topic_id,
          outbox: Array.from({ length: 5 }, (_, j) => ({ content_markdown: `m${i}.${j}` })),
          wait_seconds: 0,
        });
        acknowledged.push(...(result.sent as Sent[]).map((s) => s.message.message_id));
      } catch {
        return; // the process is gone
      }
    }
  })();
  await until(() => acknowledged.length >= 50, { what: "sends before the kill" });
  node.kill("SIGKILL");
  await sender;
  await node.close().catch(() => {});
  await using reader = await startPeer({ dbPath: pg.url });
  await reader.ok("topic_join", { agent_name: "reader", topic_id: topic.topic_id });
  const seen = new Set((await readTopic(reader, topic.topic_id)).map((m) => m.message_id));
  assert.deepEqual(acknowledged.filter((id) => !seen.has(id)), [], "0 acknowledged lost");
});

Deno.test({
  name: named(
    "db copy moves a bus from SQLite to PostgreSQL and back; stats, vacuum, migrate, doctor and wipe work there",
  ),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  await using tmp = await tmpDir();
  const file = `${tmp.path}/bus.sqlite`;
  const url = pg.url.replace("bus@", "bus:hunter2@");
  await using writer = await startPeer({ dbPath: file });
  const topic = await writer.ok("topic_create", { name: "moving" });
  await writer.ok("topic_join", { agent_name: "mover", topic_id: topic.topic_id });
  await writer.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "see parseHTTPResponse" }, { content_markdown: "second" }],
    wait_seconds: 0,
  });
  await writer.ok("send_to_agent", { name: "bob", msg: "mail survives the move" }).catch(() => {});

  const copied = await cli(["db", "copy", file, url]);
  assert.equal(copied.code, 0, copied.stderr);
  assert.match(copied.stdout, /1 topic, 2 messages, .*every count matches/);
  assert.doesNotMatch(copied.stdout + copied.stderr, /hunter2/);
  const again = await cli(["db", "copy", file, url]);
  assert.equal(again.code, 2, "a target that holds a bus is refused");
  assert.match(again.stderr, /already holds a bus/);

  const env = { AGENT_BUS_DB: url, AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" };
  await using reader = await startPeer({ dbPath: url });
  await reader.ok("topic_join", { agent_name: "reader", topic_id: topic.topic_id });
  const read = await reader.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.deepEqual(
    (read.received as { content_markdown: string }[]).map((m) => m.content_markdown),
    ["see parseHTTPResponse", "second"],
  );
  const found = await cli(["search", "http response", "--json"], env);
  assert.match(found.stdout, /"count": 1/, `code terms came along: ${found.stdout}`);
  const stats = await cli(["db", "stats", "--json"], env);
  assert.equal(stats.code, 0, stats.stderr);
  const statsJson = JSON.parse(stats.stdout);
  assert.equal(statsJson.messages, 2);
  assert.match(statsJson.postgres.version, /^\d+/);
  assert.doesNotMatch(stats.stdout, /hunter2/);
  const vacuumed = await cli(["db", "vacuum"], env);
  assert.equal(vacuumed.code, 0, vacuumed.stderr);
  const migrate = await cli(["db", "migrate"], env);
  assert.match(migrate.stdout, /up to date/);
  const doctor = await cli(["doctor", "--json"], env);
  const findings = JSON.parse(doctor.stdout).findings as {
    check: string;
    status: string;
    detail: string;
  }[];
  for (const check of ["Database", "Schema", "Wake-ups", "Stall limits"]) {
    assert.equal(findings.find((f) => f.check === check)?.status, "ok", check);
  }
  // The server kept the limits each connection asks for (over TCP: keepalives too).
  assert.match(
    findings.find((f) => f.check === "Stall limits")!.detail,
    /idle in transaction 4000 ms, statement 4000 ms, tcp_user_timeout 4000 ms, keepalives 2\+1×2 s/,
  );
  assert.doesNotMatch(doctor.stdout, /hunter2/);

  // Index rows number themselves on PostgreSQL (a send writes them before the message has its
  // rowid): make the numbers differ from the messages' rowids, as concurrent sends do.
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe("ALTER TABLE bus_fts ALTER COLUMN rowid RESTART WITH 1000");
  await admin.end();
  await reader.ok("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "a kestrel over the moor" }],
    wait_seconds: 0,
  });

  const back = `${tmp.path}/back.sqlite`;
  const returned = await cli(["db", "copy", url, back]);
  assert.equal(returned.code, 0, returned.stderr);
  assert.match(returned.stdout, /1 topic, 3 messages,/);
  // SQLite's index rows share their messages' rowids again: search, edits and deletes find them.
  const copy = new DatabaseSync(back, { readOnly: true });
  const matched = copy.prepare(
    `SELECT COUNT(*) AS n FROM bus_fts AS f
     JOIN messages AS m ON m.rowid = f.rowid AND m.message_id = f.message_id`,
  ).get() as { n: number };
  copy.close();
  assert.equal(matched.n, 3);
  const foundBack = await cli(["search", "kestrel", "--json"], { AGENT_BUS_DB: back });
  assert.match(foundBack.stdout, /"count": 1/, foundBack.stdout);

  const wiped = await cli(["db", "wipe", "--yes"], env);
  assert.equal(wiped.code, 0, wiped.stderr);
  assert.match(wiped.stdout, /\d+ tables dropped/);
  const after = await cli(["db", "migrate", "--dry-run", "--json"], env);
  assert.equal(JSON.parse(after.stdout).from, 0, "no schema left");
});

Deno.test({
  name: named(
    "index rows an older agent-bus writes beside this one's never collide, and search finds every message",
  ),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  await using peer = await startPeer({ dbPath: pg.url });
  const topic_id = String((await peer.ok("topic_create", { name: "mixed" })).topic_id);
  await peer.ok("topic_join", { agent_name: "new", topic_id });
  const send = (text: string) =>
    peer.ok("sync", { topic_id, outbox: [{ content_markdown: text }], wait_seconds: 0 });
  await send("kestrel from this version");
  // What a send of a version before migration 6 wrote, from another host: the index row under the
  // rowid its message takes.
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    await sql.begin(async (tx) => {
      const rowid = "(SELECT COALESCE(MAX(rowid), 0) + 1 FROM messages)";
      await tx.unsafe(
        `INSERT INTO bus_fts (rowid, content_markdown, terms, message_id, topic_id)
         VALUES (${rowid}, 'kestrel from an older host', '', 'older-1', $1)`,
        [topic_id],
      );
      await tx.unsafe(
        `INSERT INTO messages (rowid, message_id, topic_id, seq, sender, message_type,
           content_markdown, created_at)
         VALUES (${rowid}, 'older-1', $1, 2, 'old', 'message', 'kestrel from an older host', 0)`,
        [topic_id],
      );
      await tx.unsafe("UPDATE topic_seq SET next_seq = 3 WHERE topic_id = $1", [topic_id]);
    });
    await send("kestrel again from this version");
    const numbers = (await sql`SELECT rowid FROM bus_fts ORDER BY rowid`).map((r) =>
      Number(r.rowid)
    );
    assert.equal(numbers.length, 3);
    assert.ok(numbers[0]! < FTS_NUMBERS_FROM, "the older host's row under its message's rowid");
    assert.ok(
      numbers.slice(1).every((n) => n >= FTS_NUMBERS_FROM),
      "this version's above every rowid",
    );
  } finally {
    await sql.end();
  }
  const found = await peer.ok("messages_search", { query: "kestrel", mode: "fts" });
  assert.equal(found.count, 3);
});

Deno.test({
  name: named("six processes opening a new PostgreSQL database at once all get a working bus"),
  ignore,
}, async () => {
  await using pg = await startPostgres();
  const peers = await Promise.all(Array.from({ length: 6 }, () => startPeer({ dbPath: pg.url })));
  try {
    const created = await Promise.all(
      peers.map((peer, i) => peer.call("topic_create", { name: `cold-${i}` })),
    );
    assert.deepEqual(created.filter((r) => r.isError).map((r) => r.structuredContent), []);
    const list = await peers[0]!.ok("topic_list", {});
    assert.equal(list.count, 6);
  } finally {
    await Promise.all(peers.map((peer) => peer.close()));
  }
});

Deno.test({
  name: named("a malformed PostgreSQL URL is a clear error and a non-zero exit, at once"),
  ignore,
}, async () => {
  for (
    const url of [
      "postgres://bus:secret@[::1:bad/bus",
      "postgres://bus:50%zz@127.0.0.1/bus",
    ]
  ) {
    const started = performance.now();
    const result = await cliProcess(["topics", "list"], { AGENT_BUS_DB: url });
    const took = performance.now() - started;
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /DB_UNAVAILABLE: AGENT_BUS_DB is not a valid PostgreSQL URL/);
    assert.doesNotMatch(result.stderr, /secret/);
    // (No connection is tried: the time is the process's own start-up.)
    assert.ok(took < 20_000, `took ${took.toFixed(0)} ms`);
  }
});

Deno.test({
  name: named("a PostgreSQL URL with an IPv6 host in brackets connects"),
  ignore,
}, async () => {
  await using pg = await startPostgres({ listen: ["::1"] });
  assert.match(pg.url, /@\[::1\]:\d+\//);
  await using peer = await startPeer({ dbPath: pg.url });
  const created = await peer.ok("topic_create", { name: "over IPv6" });
  assert.equal(typeof created.topic_id, "string");
});
