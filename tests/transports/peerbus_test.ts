/**
 * The peer-bus stdio server (seed 004): bus.* tools, the peer registry,
 * push notifications, both stdin framings, and interop with the HTTP
 * mailboxes of seed 003 on one shared database.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { connectHttp, shorthand, startHttpServer } from "../_helpers/http.ts";
import { serverCommand, startPeer, textOf, until } from "../_helpers/peer.ts";
import { INIT_PARAMS, rawServer } from "../_helpers/raw.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const peerbus = (
  agent: string,
  ...more: string[]
) => ["--profile", "peerbus", "--agent", agent, ...more];

type Drained = {
  messages: { id: string; from: string; source: string; body: unknown }[];
  has_more: boolean;
};

Deno.test("mail sent over HTTP is drained by a stdio peer-bus process, and the other way round", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using alice = await connectHttp(`${server.url}/agents/alice/mcp/`);
  await using bob = await startPeer({ dbPath, args: peerbus("bob") });

  const { msg_id } = await alice.ok("send_to_agent", { name: "bob", msg: "ping over http" }) as {
    msg_id: string;
  };
  const drained = await bob.ok("bus.drain") as Drained;
  assert.deepEqual(drained, {
    messages: [{ id: msg_id, from: "alice", source: "http", body: "ping over http" }],
    has_more: false,
  });
  assert.deepEqual((await bob.ok("bus.drain") as Drained).messages, []);

  const sent = await bob.ok("bus.send", { to: "alice", body: { reply: "pong", n: [1, 2] } });
  assert.equal(sent.to, "alice");
  const { message } = await alice.ok("check_mail") as {
    message: { id: string; from: string; content: string };
  };
  assert.deepEqual(message, { id: sent.id, from: "bob", content: '{"reply":"pong","n":[1,2]}' });
  assert.deepEqual(await alice.ok("check_mail"), { message: null });
});

Deno.test("bus.drain returns every body verbatim, each message once, oldest first", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, args: peerbus("a") });
  await using b = await startPeer({ dbPath, args: peerbus("b") });
  const bodies = [
    { nested: { list: [1, 2.5, -3e-7, null, true], "ü✓": "π" } },
    "plain",
    42,
    [],
    false,
  ];
  for (const body of bodies) await a.ok("bus.send", { to: "b", body });
  const result = await b.call("bus.drain");
  const structured = result.structuredContent as Drained;
  assert.deepEqual(structured.messages.map((m) => m.body), bodies);
  assert.ok(structured.messages.every((m) => m.from === "a" && m.source === "peer-bus"));
  // The text is a JSON array of {id, from, source, body} too.
  assert.deepEqual(JSON.parse(textOf(result)), structured.messages);
  assert.equal(new Set(structured.messages.map((m) => m.id)).size, bodies.length);
  assert.deepEqual((await b.ok("bus.drain") as Drained).messages, []);

  const missing = await a.fail("bus.send", { to: "b" });
  assert.equal(missing.code, "INVALID_ARGUMENT");
  const badName = await a.fail("bus.send", { to: "no spaces", body: 1 });
  assert.equal(badName.code, "INVALID_ARGUMENT");
});

Deno.test("broadcast reaches exactly the registered peers, with no backfill", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, args: peerbus("a") });
  await using b = await startPeer({ dbPath, args: peerbus("b") });
  await using c = await startPeer({ dbPath, args: peerbus("c") });
  assert.deepEqual(await a.ok("bus.peers"), { self: "a", peers: ["b", "c"] });
  // An HTTP mailbox agent is not a running peer.
  await using server = await startHttpServer({ dbPath });
  await using web = await connectHttp(`${server.url}/agents/web/mcp/`);

  const sent = await a.ok("bus.broadcast", { body: { hello: "all" } });
  assert.deepEqual(sent.recipients, ["b", "c"]);
  await using late = await startPeer({ dbPath, args: peerbus("late") });
  for (const peer of [b, c]) {
    const { messages } = await peer.ok("bus.drain") as Drained;
    assert.deepEqual(messages.map((m) => [m.from, m.body]), [["a", { hello: "all" }]]);
  }
  assert.deepEqual((await a.ok("bus.drain") as Drained).messages, []);
  assert.deepEqual((await late.ok("bus.drain") as Drained).messages, []);
  assert.deepEqual(await web.ok("check_mail"), { message: null });
});

Deno.test("a peer leaves bus.peers at once when it stops, and after its lease when it is killed", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  const env = { AGENT_BUS_PEER_LEASE_SECONDS: "2" };
  await using a = await startPeer({ dbPath, env, args: peerbus("a") });
  const b = await startPeer({ dbPath, env, args: peerbus("b") });
  // (c serves in a process of its own, which is what a kill leaves registered: an entry killed
  // on the resident bus is a client gone, whose session the bus ends at once, as b's.)
  const c = await startPeer({ dbPath, env, args: peerbus("c"), resident: false });
  const peers = async () => (await a.ok("bus.peers")).peers as string[];
  assert.deepEqual(await peers(), ["b", "c"]);

  await b.close();
  await until(async () => !(await peers()).includes("b"), {
    timeoutMs: 5_000,
    what: "b to unregister",
  });
  // A live peer keeps its lease fresh well past the lease time.
  c.kill("SIGKILL");
  const killedAt = Date.now();
  await until(async () => (await peers()).length === 0, {
    timeoutMs: 15_000,
    everyMs: 100,
    what: "c's lease to lapse",
  });
  assert.ok(
    Date.now() - killedAt >= 1000,
    "the killed peer must stay listed until its lease lapses",
  );
  await c.close();
  await using d = await startPeer({ dbPath, env, args: peerbus("d") });
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // longer than one lease, on purpose
  assert.deepEqual(await peers(), ["d"]);
  assert.deepEqual(await d.ok("bus.peers"), { self: "d", peers: ["a"] });
});

Deno.test("underscore tool names, --no-drain and --server-name", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using plain = await startPeer({ dbPath, args: peerbus("p") });
  assert.deepEqual(
    (await plain.client.listTools()).tools.map((t) => t.name).sort(),
    ["bus.broadcast", "bus.drain", "bus.peers", "bus.send"],
  );
  assert.equal(plain.client.getServerVersion()?.name, "agent-bus");
  await using custom = await startPeer({
    dbPath,
    env: { AGENT_BUS_TOOL_NAMES: "underscore" },
    args: peerbus("q", "--no-drain", "--server-name", "peerbus-cc"),
  });
  assert.deepEqual(
    (await custom.client.listTools()).tools.map((t) => t.name).sort(),
    ["bus_broadcast", "bus_peers", "bus_send"],
  );
  assert.equal(custom.client.getServerVersion()?.name, "peerbus-cc");
  assert.deepEqual(await custom.ok("bus_peers"), { self: "q", peers: ["p"] });
  assert.equal((await custom.fail("bus_drain")).code, "INVALID_ARGUMENT");
});

Deno.test("--profile peerbus without a name, or with a bad one, is a usage error", async () => {
  await using dir = await tmpDir();
  const [command, ...args] = serverCommand(`${dir.path}/bus.sqlite`);
  for (
    const extra of [["--profile", "peerbus"], ["--profile", "peerbus", "--agent", "a/b"], [
      "--push",
      "x",
    ]]
  ) {
    const { code, stderr } = await new Deno.Command(command!, {
      args: [...args, ...extra],
      env: { AGENT_BUS_DB: `${dir.path}/bus.sqlite` },
      stdin: "null",
    }).output();
    assert.equal(code, 2, extra.join(" "));
    assert.match(new TextDecoder().decode(stderr), /agent|push/);
  }
});

Deno.test("stdin takes newline-delimited and Content-Length-framed messages; stdout is one JSON per line", async () => {
  await using dir = await tmpDir();
  await using server = rawServer(`${dir.path}/bus.sqlite`, {}, peerbus("framed"));
  const frame = (message: unknown) => {
    const body = new TextEncoder().encode(JSON.stringify(message));
    return `Content-Length: ${body.length}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${
      JSON.stringify(message)
    }`;
  };
  await server.send(frame({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS }));
  const init = await server.next() as { id: number; result: { serverInfo: { name: string } } };
  assert.equal(init.id, 1);
  assert.equal(init.result.serverInfo.name, "agent-bus");
  await server.send(frame({ jsonrpc: "2.0", method: "notifications/initialized" }));
  // Mixed framings back to back in one write, with a multi-byte body.
  await server.send(
    frame({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "bus.send", arguments: { to: "framed", body: "héllo ✓" } },
    }) +
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "bus.drain", arguments: {} },
      }) + "\n",
  );
  const sent = await server.next() as { id: number; result: { isError?: boolean } };
  assert.equal(sent.id, 2);
  assert.ok(!sent.result.isError);
  const drained = await server.next() as { id: number; result: { structuredContent: Drained } };
  assert.equal(drained.id, 3);
  assert.deepEqual(drained.result.structuredContent.messages.map((m) => m.body), ["héllo ✓"]);
});

Deno.test("SIGTERM ends a peer-bus server promptly with stdin still open; so does stdin EOF", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  for (const how of ["SIGTERM", "EOF"] as const) {
    await using server = rawServer(dbPath, {}, peerbus(`p-${how}`));
    await server.request(1, "initialize", INIT_PARAMS);
    assert.equal((await server.next()).id, 1);
    const started = Date.now();
    if (how === "SIGTERM") server.child.kill("SIGTERM");
    else await server.closeStdin();
    const status = await server.child.status;
    assert.equal(status.code, 0, `${how}: ${server.stderr()}`);
    assert.ok(Date.now() - started < 5_000, `${how} took ${Date.now() - started} ms`);
  }
  // Both left the registry on the way out.
  await using observer = await startPeer({ dbPath, args: peerbus("observer") });
  assert.deepEqual((await observer.ok("bus.peers")).peers, []);
});

Deno.test("a subscribed client gets notifications/resources/updated for mailbox://NAME when mail arrives", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using bob = await startPeer({ dbPath, args: peerbus("bob") });
  await using alice = await startPeer({ dbPath, args: peerbus("alice") });
  const updates: string[] = [];
  bob.client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n) => void updates.push(n.params.uri),
  );
  assert.deepEqual((await bob.client.listResources()).resources.map((r) => r.uri), [
    "mailbox://bob",
  ]);
  await bob.client.subscribeResource({ uri: "mailbox://bob" });
  await alice.ok("bus.send", { to: "bob", body: { n: 1 } });
  await until(() => updates.length > 0, { timeoutMs: 5_000, what: "resources/updated" });
  assert.deepEqual(updates, ["mailbox://bob"]);
  // Reading the resource leaves the mail unread; drain takes it.
  const read = await bob.client.readResource({ uri: "mailbox://bob" });
  assert.deepEqual(
    JSON.parse((read.contents[0] as { text: string }).text).messages.map((
      m: Drained["messages"][0],
    ) => m.body),
    [{ n: 1 }],
  );
  assert.deepEqual((await bob.ok("bus.drain") as Drained).messages.map((m) => m.body), [{ n: 1 }]);
});

Deno.test("--push claude-channel pushes new mail as notifications/claude/channel after initialization", async () => {
  await using dir = await tmpDir();
  const dbPath = `${dir.path}/bus.sqlite`;
  await using alice = await startPeer({ dbPath, args: peerbus("alice") });
  // Mail that waits before the server starts is pushed once the client is initialized.
  await alice.ok("bus.send", { to: "cc", body: "early" });
  const pushed: { content: string; meta: Record<string, string> }[] = [];
  const schema = z.object({
    method: z.literal("notifications/claude/channel"),
    params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
  });
  await using cc = await startPeer({
    dbPath,
    args: peerbus("cc", "--push", "claude-channel", "--no-drain"),
    onClient: (client) =>
      client.setNotificationHandler(
        schema as never,
        (n: z.infer<typeof schema>) => void pushed.push(n.params),
      ),
  });
  assert.deepEqual(cc.client.getServerCapabilities()?.experimental, { "claude/channel": {} });
  await until(() => pushed.length >= 2, {
    timeoutMs: 10_000,
    what: "the announcement and the waiting mail to be pushed",
  });
  // First the server announces itself (as the seed's cc adapter does), then the mail.
  const [announce, ...mail] = pushed;
  assert.equal(announce!.meta.event, "announce");
  assert.equal(announce!.meta.self, "cc");
  assert.match(announce!.content, /you are "cc".*alice/s);
  await alice.ok("bus.send", { to: "cc", body: { task: "review" } });
  await until(() => mail.length + 1 < pushed.length, {
    timeoutMs: 10_000,
    what: "the new mail to be pushed",
  });
  const delivered = pushed.slice(1);
  assert.deepEqual(delivered.map((p) => p.content), ["early", '{"task":"review"}']);
  assert.ok(
    delivered.every((p) => p.meta.from === "alice" && p.meta.source === "peer-bus" && p.meta.id),
  );
  // Pushed mail counts as delivered: nothing is left in cc's mailbox.
  await using http = await startHttpServer({ dbPath });
  const { body } = await shorthand(`${http.url}/agents/cc/mcp/`, "check_mail");
  assert.deepEqual(body, { message: null });
});
