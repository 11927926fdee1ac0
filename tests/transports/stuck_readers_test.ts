/**
 * Readers that stop reading and batches that ask too much, against a real
 * `agent-bus http` process whose memory is read from `/proc`: event streams
 * (`/events`, `/api/events`, the legacy `/sse`) whose clients never read
 * hold a bounded amount each and are ended, a client that keeps reading
 * still gets everything, and a JSON-RPC batch of 20,000 requests on the
 * legacy transport is refused at once while `/health` keeps answering.
 */

import assert from "node:assert/strict";
import { type HttpServer, startHttpServer } from "../_helpers/http.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { until } from "../_helpers/peer.ts";

/** The server's resident memory, in MB. */
async function rssMB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** A connection that asks for `path`, reads the answer's head, and then reads no more. */
async function stuckReader(server: HttpServer, path: string): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await conn.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`),
  );
  const buffer = new Uint8Array(1);
  let head = "";
  while (!head.endsWith("\r\n\r\n")) {
    const n = await conn.read(buffer);
    assert.ok(n !== null, `${path} closed before answering`);
    head += String.fromCharCode(buffer[0]!);
  }
  assert.match(head, /^HTTP\/1\.1 200/);
  return conn;
}

/**
 * What is left of a chunked answer on a connection, to its last chunk (the
 * connection itself stays open): its size and its last 300 characters.
 */
async function rest(conn: Deno.TcpConn): Promise<{ bytes: number; tail: string }> {
  const buffer = new Uint8Array(64 << 10);
  let bytes = 0;
  let tail = "";
  const timer = setTimeout(() => conn.close(), 30_000);
  try {
    while (!tail.endsWith("\r\n0\r\n\r\n")) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      bytes += n;
      tail = (tail + new TextDecoder().decode(buffer.subarray(0, n))).slice(-300);
    }
  } finally {
    clearTimeout(timer);
  }
  return { bytes, tail };
}

async function json(response: Response) {
  return { status: response.status, body: await response.json() };
}

Deno.test("event streams whose clients never read hold a bounded amount each and end; a reader gets everything", async () => {
  await using tmp = await tmpDir();
  await using server = await startHttpServer({ dbPath: `${tmp.path}/bus.sqlite` });
  const topic = await json(
    await fetch(`${server.url}/api/topics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "flood" }),
    }),
  );
  const topicId = topic.body.topic.topic_id as string;
  // A reader that keeps up counts every message.
  const reader = await fetch(`${server.url}/api/events?topic_id=${topicId}`);
  const frames = reader.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = 0;
  let buffered = "";
  const counting = (async () => {
    for (;;) {
      const { value, done } = await frames.read();
      if (done) return;
      buffered += value;
      const events = buffered.split("\n\n");
      buffered = events.pop()!;
      seen += events.filter((e) => e.includes("event: message")).length;
    }
  })();
  const body = "x".repeat(60_000);
  /** 30 MB of posts: a stuck stream would hold all of it if nothing bounded it. */
  const flood = async (round: number) => {
    for (let i = 0; i < 500; i++) {
      // On a busy machine a post may run out of its call's time (503, DB_UNAVAILABLE): it is
      // sent again with the same client_message_id, so it is stored once either way.
      for (let attempt = 1;; attempt++) {
        const posted = await fetch(`${server.url}/api/topics/${topicId}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            content_markdown: `${round}.${i} ${body}`,
            client_message_id: `flood-${round}.${i}`,
          }),
        });
        await posted.body?.cancel();
        if (posted.status === 503 && attempt < 5) continue;
        assert.ok(posted.status === 201 || posted.status === 200, `post ${i}: ${posted.status}`);
        break;
      }
    }
    await until(() => seen === 500 * round, { timeoutMs: 60_000, what: "the reader's messages" });
  };
  const stuck: Deno.TcpConn[] = [];
  try {
    // First without stuck readers: what the server's own churn costs is taken before measuring.
    await flood(1);
    for (let i = 0; i < 4; i++) stuck.push(await stuckReader(server, "/events"));
    for (let i = 0; i < 4; i++) {
      stuck.push(await stuckReader(server, `/api/events?topic_id=${topicId}`));
    }
    const before = await rssMB(server.pid);
    await flood(2);
    const grown = (await rssMB(server.pid)) - before;
    // Eight stuck streams hold at most 4 MiB each; unbounded, they would hold 240 MB on top of
    // the server's own churn (35–90 MB here, more on PostgreSQL's node on a busy machine: 133
    // MB once), so the bound sits between the two. The bytes each was sent are checked below.
    assert.ok(grown < 160, `the server grew by ${grown.toFixed(0)} MB for 8 stuck streams`);
    // Each was told to reconnect, and ended, a few MB into the 30.
    for (const [i, conn] of stuck.entries()) {
      const { bytes, tail } = await rest(conn);
      assert.ok(bytes < 16 << 20, `stuck stream ${i} was sent ${bytes} bytes`);
      assert.match(tail, i < 4 ? /"type":"reconnect"/ : /event: reset\n/, `stuck stream ${i}`);
    }
  } finally {
    for (const conn of stuck) conn.close();
    await frames.cancel();
    await counting.catch(() => {});
  }
});

Deno.test("the legacy /sse transport refuses a batch of 20,000 requests at once and ends a session that stops reading", async () => {
  await using tmp = await tmpDir();
  await using server = await startHttpServer({ dbPath: `${tmp.path}/bus.sqlite` });
  // Open a session, read its endpoint, then read no more.
  const conn = await stuckReader(server, "/sse");
  const first = new Uint8Array(4096);
  let head = "";
  while (!/data: (\/messages\?sessionId=\S+)/.test(head)) {
    const n = await conn.read(first);
    assert.ok(n !== null, "the stream ended early");
    head += new TextDecoder().decode(first.subarray(0, n));
  }
  const endpoint = /data: (\/messages\?sessionId=\S+)/.exec(head)![1]!;
  const post = (messages: unknown) =>
    fetch(`${server.url}${endpoint}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(messages),
    });
  const initialize = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2024-11-05",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  assert.equal(initialize.status, 202);
  await initialize.body?.cancel();
  const before = await rssMB(server.pid);

  const huge = Array.from(
    { length: 20_000 },
    (_, id) => ({ jsonrpc: "2.0", id: id + 1, method: "tools/list" }),
  );
  const health = fetch(`${server.url}/health`);
  const refused = await post(huge);
  assert.equal(refused.status, 400);
  assert.match((await refused.json()).error.message, /batch of more than 32 messages/);
  assert.equal((await health).status, 200);

  // Batches it takes, while the client reads nothing: the session ends before memory grows.
  let status = 202;
  let batches = 0;
  while (status === 202) {
    assert.ok(batches < 2000, "the session never ended");
    const batch = Array.from(
      { length: 32 },
      (_, id) => ({ jsonrpc: "2.0", id: id + 1, method: "tools/list" }),
    );
    const response = await post(batch);
    status = response.status;
    await response.body?.cancel();
    batches++;
  }
  assert.equal(status, 404, "the session is gone");
  const grown = (await rssMB(server.pid)) - before;
  assert.ok(grown < 64, `the server grew by ${grown.toFixed(0)} MB`);
  const healthy = await fetch(`${server.url}/health`);
  assert.equal(healthy.status, 200);
  await healthy.body?.cancel();
  conn.close();
});
