/**
 * `agent-bus http`: mailboxes (seed 003) and the peer tools over MCP
 * Streamable HTTP, the curl shorthand, sessions, and the guard. Every test
 * runs a real server process and real SDK clients on a temp database.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectHttp, rawStatus, shorthand, startHttpServer } from "../_helpers/http.ts";
import { serverCommand, startPeer, textOf, until } from "../_helpers/peer.ts";
import { serveHttpInProcess } from "../_helpers/in_process.ts";
import { INIT_PARAMS } from "../_helpers/raw.ts";
import { readRows } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS };
const MCP_ACCEPT = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

async function mailboxRows(dbPath: string): Promise<number> {
  return Number((await readRows(dbPath, "SELECT COUNT(*) AS n FROM bus_mailbox"))[0]!.n);
}

Deno.test("two HTTP clients exchange 100 messages each way through mailboxes, none lost or repeated", async () => {
  await using dir = await tmpDir();
  await using server = serveHttpInProcess(`${dir.path}/bus.sqlite`);
  await using alice = await connectHttp(`${server.url}/agents/alice/mcp/`);
  await using bob = await connectHttp(`${server.url}/agents/bob/mcp`);
  const tools = (await alice.client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(tools, ["check_mail", "send_to_agent"]);

  const exchange = async (from: typeof alice, to: string, tag: string) => {
    for (let i = 0; i < 100; i++) {
      const sent = await from.ok("send_to_agent", {
        name: to,
        msg: `${tag} ${i}`,
        msg_id: `${tag}-${i}`,
      });
      assert.deepEqual(sent, { msg_id: `${tag}-${i}`, duplicate: false });
    }
  };
  const readAll = async (reader: typeof alice) => {
    const got: { id: string; from: string; content: string }[] = [];
    await until(async () => {
      const { message } = await reader.ok("check_mail") as { message: (typeof got)[number] | null };
      if (message) got.push(message);
      return got.length >= 100;
    }, { timeoutMs: 30_000, everyMs: 0, what: "100 messages" });
    return got;
  };
  const [aliceGot, bobGot] = await Promise.all([
    exchange(alice, "bob", "a").then(() => readAll(alice)),
    exchange(bob, "alice", "b").then(() => readAll(bob)),
  ]);
  assert.deepEqual(bobGot.map((m) => m.content), Array.from({ length: 100 }, (_, i) => `a ${i}`));
  assert.deepEqual(aliceGot.map((m) => m.id), Array.from({ length: 100 }, (_, i) => `b-${i}`));
  assert.ok(bobGot.every((m) => m.from === "alice") && aliceGot.every((m) => m.from === "bob"));
  // Empty now, and a retried send stores nothing.
  assert.deepEqual(await bob.ok("check_mail"), { message: null });
  const retry = await alice.call("send_to_agent", { name: "bob", msg: "a 0", msg_id: "a-0" });
  assert.equal(textOf(retry), "a-0");
  assert.deepEqual(retry.structuredContent, { msg_id: "a-0", duplicate: true });
  assert.deepEqual(await bob.ok("check_mail"), { message: null });
  assert.equal(await mailboxRows(`${dir.path}/bus.sqlite`), 200);
});

Deno.test("the seed's curl smoke test works literally", async () => {
  await using dir = await tmpDir();
  await using server = serveHttpInProcess(`${dir.path}/bus.sqlite`);
  const curl = async (agent: string, body: string) => {
    const { stdout, success } = await new Deno.Command("curl", {
      args: [
        "-s",
        "-X",
        "POST",
        `http://localhost:${server.port}/agents/${agent}/mcp/`,
        "-H",
        "Content-Type: application/json",
        "-d",
        body,
      ],
    }).output();
    assert.ok(success, "curl failed");
    return JSON.parse(new TextDecoder().decode(stdout));
  };
  const sent = await curl(
    "alice",
    '{"tool": "send_to_agent", "args": {"name":"bob","msg":"ping"}}',
  );
  assert.equal(typeof sent.msg_id, "string");
  const got = await curl("bob", '{"tool": "check_mail", "args": {}}');
  assert.deepEqual(got, { message: { id: sent.msg_id, from: "alice", content: "ping" } });
  assert.deepEqual(await curl("bob", '{"tool": "check_mail", "args": {}}'), { message: null });
});

Deno.test("shorthand errors carry the tool's code and a matching HTTP status", async () => {
  await using dir = await tmpDir();
  await using server = serveHttpInProcess(`${dir.path}/bus.sqlite`, {
    AGENT_BUS_MAX_MAILBOX_DEPTH: "3",
  });
  const alice = `${server.url}/agents/alice/mcp/`;
  for (let i = 0; i < 3; i++) {
    assert.equal(
      (await shorthand(alice, "send_to_agent", { name: "bob", msg: `m${i}` })).status,
      200,
    );
  }
  const full = await shorthand(alice, "send_to_agent", { name: "bob", msg: "one too many" });
  assert.equal(full.status, 429);
  assert.equal((full.body!.error as { code: string }).code, "MAILBOX_FULL");
  // Nothing was lost: the three fit, the fourth was not stored.
  for (let i = 0; i < 3; i++) {
    const { body } = await shorthand(`${server.url}/agents/bob/mcp/`, "check_mail");
    assert.equal((body!.message as { content: string }).content, `m${i}`);
  }
  assert.equal(await mailboxRows(`${dir.path}/bus.sqlite`), 3);

  const badName = await shorthand(alice, "send_to_agent", { name: "bob/../x", msg: "hi" });
  assert.equal(badName.status, 400);
  assert.equal((badName.body!.error as { code: string }).code, "INVALID_ARGUMENT");
  const unknown = await shorthand(alice, "no_such_tool");
  assert.equal(unknown.status, 400);
  assert.match((unknown.body!.error as { message: string }).message, /send_to_agent/);
  const badPath = await fetch(`${server.url}/agents/b%20ob/mcp/`, { method: "POST", body: "{}" });
  assert.equal(badPath.status, 400);
  await badPath.body?.cancel();
  const nowhere = await fetch(`${server.url}/elsewhere`);
  assert.equal(nowhere.status, 404);
  await nowhere.body?.cancel();
  // The peer tools answer the shorthand too.
  const ping = await shorthand(`${server.url}/mcp`, "ping");
  assert.equal(ping.body!.ok, true);
});

Deno.test("a bad or missing token, a foreign Origin or Host, or an oversized body is refused and stores nothing", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = serveHttpInProcess(dbPath, { AGENT_BUS_HTTP_TOKEN: "s3cret-token" });
  const url = `${server.url}/agents/alice/mcp/`;
  const send = { name: "bob", msg: "should not arrive" };
  const good = { authorization: "Bearer s3cret-token" };

  const missing = await shorthand(url, "send_to_agent", send);
  assert.equal(missing.status, 401);
  const wrong = await shorthand(url, "send_to_agent", send, {
    authorization: "Bearer s3cret-tokeN",
  });
  assert.equal(wrong.status, 401);
  const origin = await shorthand(url, "send_to_agent", send, {
    ...good,
    origin: "https://evil.example",
  });
  assert.equal(origin.status, 403);

  const raw = (host: string) =>
    rawStatus(server.port, {
      method: "POST",
      path: "/agents/alice/mcp/",
      host,
      headers: { authorization: "Bearer s3cret-token", "content-type": "application/json" },
      body: JSON.stringify({ tool: "send_to_agent", args: send }),
    });
  assert.equal(await raw("evil.example"), 403);
  assert.equal(await raw(`evil.example:${server.port}`), 403);

  const huge = await fetch(url, {
    method: "POST",
    headers: { ...good, "content-type": "application/json" },
    body: JSON.stringify({
      tool: "send_to_agent",
      args: { name: "bob", msg: "x".repeat(24 << 20) },
    }),
  });
  assert.equal(huge.status, 413);
  await huge.body?.cancel();
  const hugeMcp = await fetch(url, {
    method: "POST",
    headers: { ...good, ...MCP_ACCEPT },
    body: JSON.stringify({ ...INIT, params: { ...INIT.params, pad: "y".repeat(24 << 20) } }),
  });
  assert.equal(hugeMcp.status, 413);
  await hugeMcp.body?.cancel();
  // A body without a declared length is counted as it streams.
  const chunk = new TextEncoder().encode("x".repeat(1 << 20));
  let sentChunks = 0;
  const streamed = await fetch(url, {
    method: "POST",
    headers: { ...good, "content-type": "application/json" },
    body: new ReadableStream({
      pull(controller) {
        if (sentChunks++ === 0) {
          controller.enqueue(
            new TextEncoder().encode('{"tool":"send_to_agent","args":{"name":"bob","msg":"'),
          );
        } else if (sentChunks < 40) controller.enqueue(chunk);
        else {
          controller.enqueue(new TextEncoder().encode('"}}'));
          controller.close();
        }
      },
    }),
  }).catch((error) => error);
  if (streamed instanceof Response) {
    assert.equal(streamed.status, 413);
    await streamed.body?.cancel();
  } // (or the server cut the upload short, which fetch reports as an error)

  assert.equal(await mailboxRows(dbPath), 0);
  // The right token on the loopback Host works, for the shorthand and for MCP clients.
  assert.equal((await shorthand(url, "send_to_agent", send, good)).status, 200);
  await using bob = await connectHttp(`${server.url}/agents/bob/mcp/`, { headers: good });
  const { message } = await bob.ok("check_mail") as { message: { content: string } };
  assert.equal(message.content, "should not arrive");
  await assert.rejects(connectHttp(`${server.url}/agents/bob/mcp/`), /401|Unauthorized|token/i);
});

Deno.test("http refuses to bind a non-loopback address without a token", async () => {
  await using dir = await tmpDir();
  const [command, ...args] = serverCommand(`${dir.path}/bus.sqlite`);
  const { code, stderr } = await new Deno.Command(command!, {
    args: [...args, "http", "--host", "0.0.0.0", "--port", "0"],
    env: { AGENT_BUS_DB: `${dir.path}/bus.sqlite`, AGENT_BUS_HTTP_TOKEN: "" },
    stdin: "null",
  }).output();
  assert.equal(code, 2);
  assert.match(new TextDecoder().decode(stderr), /AGENT_BUS_HTTP_TOKEN/);
});

Deno.test("sessions: bound to their route, ended by DELETE, expired when idle; JSON-response mode", async () => {
  await using dir = await tmpDir();
  await using server = serveHttpInProcess(`${dir.path}/bus.sqlite`, {
    AGENT_BUS_HTTP_SESSION_IDLE_SECONDS: "1",
    AGENT_BUS_HTTP_JSON_RESPONSE: "true",
  });
  const open = async (path: string) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: MCP_ACCEPT,
      body: JSON.stringify(INIT),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /application\/json/);
    const body = await response.json();
    assert.equal(body.result.serverInfo.name, "agent-bus");
    return response.headers.get("mcp-session-id")!;
  };
  const list = async (path: string, session: string) => {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { ...MCP_ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    const body = await response.json();
    return { status: response.status, body };
  };
  const session = await open("/agents/carol/mcp/");
  const listed = await list("/agents/carol/mcp/", session);
  assert.equal(listed.status, 200);
  assert.equal(listed.body.result.tools.length, 2);
  // Another agent's route, or the peer route, does not know this session.
  assert.equal((await list("/agents/dave/mcp/", session)).status, 404);
  assert.equal((await list("/mcp", session)).status, 404);

  const deleted = await fetch(`${server.url}/agents/carol/mcp/`, {
    method: "DELETE",
    headers: { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
  });
  assert.equal(deleted.status, 200);
  await deleted.body?.cancel();
  assert.equal((await list("/agents/carol/mcp/", session)).status, 404);

  // Each check uses the session, so check less often than the idle limit.
  const idle = await open("/mcp");
  await until(async () => (await list("/mcp", idle)).status === 404, {
    timeoutMs: 15_000,
    everyMs: 2500,
    what: "the idle session to expire",
  });
  const noSession = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: MCP_ACCEPT,
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  });
  assert.equal(noSession.status, 400);
  await noSession.body?.cancel();
});

Deno.test("the peer tools over HTTP share topics with stdio peers", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using http = await connectHttp(`${server.url}/mcp`);
  await using stdio = await startPeer({ dbPath });
  const { topic_id } = await http.ok("topic_create", { name: "over-http" }) as { topic_id: string };
  await http.ok("topic_join", { agent_name: "web", topic_id });
  await stdio.ok("topic_join", { agent_name: "term", topic_id });
  await http.ok("sync", {
    topic_id,
    outbox: [{ content_markdown: "hello from http" }],
    wait_seconds: 0,
  });
  const got = await stdio.ok("sync", { topic_id, wait_seconds: 5 }) as {
    received: { content_markdown: string; sender: string }[];
  };
  assert.deepEqual(got.received.map((m) => [m.sender, m.content_markdown]), [[
    "web",
    "hello from http",
  ]]);
});

Deno.test("an HTTP mailbox client subscribed to mailbox://NAME hears of new mail at once", async () => {
  await using dir = await tmpDir();
  await using server = await startHttpServer({ dbPath: `${dir.path}/bus.sqlite` });
  await using bob = await connectHttp(`${server.url}/agents/bob/mcp/`);
  const updates: string[] = [];
  bob.client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n) => void updates.push(n.params.uri),
  );
  const { resources } = await bob.client.listResources();
  assert.deepEqual(resources.map((r) => r.uri), ["mailbox://bob"]);
  await bob.client.subscribeResource({ uri: "mailbox://bob" });
  // The standalone SSE stream opens asynchronously; keep sending until one update lands.
  await until(async () => {
    await shorthand(`${server.url}/agents/alice/mcp/`, "send_to_agent", {
      name: "bob",
      msg: "wake up",
    });
    return updates.length > 0;
  }, { timeoutMs: 10_000, everyMs: 200, what: "a resources/updated notification" });
  assert.equal(updates[0], "mailbox://bob");
  const read = await bob.client.readResource({ uri: "mailbox://bob" });
  const listed = JSON.parse((read.contents[0] as { text: string }).text);
  assert.equal(listed.messages[0].body, "wake up");
});

Deno.test("SIGTERM stops the HTTP server promptly, with sessions and streams open", async () => {
  await using dir = await tmpDir();
  const server = await startHttpServer({ dbPath: `${dir.path}/bus.sqlite` });
  const peer = await connectHttp(`${server.url}/mcp`);
  const { topic_id } = await peer.ok("topic_create", { name: "t" }) as { topic_id: string };
  await peer.ok("topic_join", { agent_name: "w", topic_id });
  const waiting = peer.call("sync", { topic_id, wait_seconds: 60 }).catch((error) => error);
  const started = Date.now();
  const status = await server.stop("SIGTERM");
  assert.equal(status.code, 0, server.stderr());
  assert.ok(Date.now() - started < 10_000);
  await peer.client.close().catch(() => {});
  await waiting;
});

Deno.test("concurrent readers in several processes each get every message exactly once", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using one = await startHttpServer({ dbPath });
  await using two = await startHttpServer({ dbPath });
  const total = 300;
  for (let i = 0; i < total; i += 50) {
    await Promise.all(
      Array.from(
        { length: 50 },
        (_, j) =>
          shorthand(`${one.url}/agents/alice/mcp/`, "send_to_agent", {
            name: "bob",
            msg: `m${i + j}`,
          }),
      ),
    );
  }
  const readers = await Promise.all(
    [one, two, one, two].map((server) => connectHttp(`${server.url}/agents/bob/mcp/`)),
  );
  await using stdioBob = await startPeer({
    dbPath,
    args: ["--profile", "peerbus", "--agent", "bob"],
  });
  const seen: string[] = [];
  await Promise.all([
    ...readers.map(async (reader) => {
      for (;;) {
        const { message } = await reader.ok("check_mail") as {
          message: { content: string } | null;
        };
        if (!message) return;
        seen.push(message.content);
      }
    }),
    (async () => {
      for (let round = 0; round < 5; round++) {
        const { messages } = await stdioBob.ok("bus.drain") as { messages: { body: string }[] };
        seen.push(...messages.map((m) => m.body));
      }
    })(),
  ]);
  for (const reader of readers) await reader.close();
  assert.equal(seen.length, total, "every message once");
  assert.equal(new Set(seen).size, total, "no message twice");
});

Deno.test("a browser request must come from the server's own origin or an --allow-origin one", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({
    dbPath,
    args: ["--allow-origin", "http://localhost:5173"],
  });
  const url = `${server.url}/agents/alice/mcp/`;
  const send = (origin?: string) =>
    shorthand(url, "send_to_agent", { name: "bob", msg: "hi" }, origin ? { origin } : {});
  // Another page on this machine (another port) is another origin: refused, nothing stored.
  assert.equal((await send(`http://127.0.0.1:${server.port + 1}`)).status, 403);
  assert.equal((await send("http://localhost:9999")).status, 403);
  assert.equal((await send("null")).status, 403);
  // The server's own origin, the allowed one, and no Origin at all (curl, agents) pass.
  assert.equal((await send(server.url)).status, 200);
  assert.equal((await send("http://localhost:5173")).status, 200);
  assert.equal((await send()).status, 200);
  const popped = await shorthand(`${server.url}/agents/bob/mcp/`, "check_mail");
  assert.equal((popped.body as { message: { content: string } }).message.content, "hi");
});
