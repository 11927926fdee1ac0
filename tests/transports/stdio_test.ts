/**
 * The stdio transport at the byte level: a real server process fed raw
 * lines, including ones a well-behaved client would never send.
 */

import assert from "node:assert/strict";
import { BODY_STALL_MS } from "../../lib/transports/frame_reader.ts";
import { INIT_PARAMS, rawServer } from "../_helpers/raw.ts";
import { until } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("stdio server answers bad lines with JSON-RPC errors and keeps serving", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`);
  await server.request(1, "initialize", INIT_PARAMS);
  assert.equal((await server.next()).id, 1);
  await server.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');

  await server.send("this is not json\n");
  const parseError = await server.next();
  assert.deepEqual(parseError.error, {
    code: -32700,
    message: "Parse error: the line is not valid JSON",
  });

  await server.send('{"id": 7, "hello": "world"}\n');
  const invalid = await server.next();
  assert.equal(invalid.id, 7);
  assert.equal((invalid.error as { code: number }).code, -32600);

  // Near misses of the common shape are refused as the SDK's schema refuses them.
  for (
    const line of [
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ping"},"extra":1}',
      '{"jsonrpc":"1.0","id":8,"method":"tools/call","params":{"name":"ping"}}',
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":["ping"]}',
      '{"jsonrpc":"2.0","id":8.5,"method":"tools/call","params":{"name":"ping"}}',
      '{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"ping"}}',
    ]
  ) {
    await server.send(`${line}\n`);
    assert.equal(((await server.next()).error as { code: number }).code, -32600, line);
  }

  await server.request(2, "tools/call", { name: "ping", arguments: {} });
  const pong = await server.next();
  assert.equal(pong.id, 2);
  assert.equal((pong.result as { structuredContent: { ok: boolean } }).structuredContent.ok, true);
  await server.request(3, "tools/call", {
    name: "ping",
    arguments: {},
    _meta: { progressToken: "p1" },
  });
  assert.equal((await server.next()).id, 3, "a call with _meta takes the schema's path");
});

Deno.test("stdio server drops an oversized line, answers its id, and keeps serving", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`, {
    AGENT_BUS_MAX_OUTBOX: "1",
    AGENT_BUS_MAX_MESSAGE_CHARS: "10",
  });
  await server.request(1, "initialize", INIT_PARAMS);
  await server.next();
  const huge = "y".repeat(20 * 1024 * 1024);
  await server.send(
    `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"ping","arguments":{"pad":"${huge}"}}}\n`,
  );
  const tooLarge = await server.next();
  assert.equal(tooLarge.id, 42);
  assert.match((tooLarge.error as { message: string }).message, /Request too large/);
  await server.request(3, "tools/call", { name: "ping", arguments: {} });
  const pong = await server.next();
  assert.equal(pong.id, 3);
});

Deno.test("stdio server gives up a Content-Length body that never arrives and answers the lines that follow", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`);
  await server.request(1, "initialize", INIT_PARAMS);
  assert.equal((await server.next()).id, 1);
  await server.send("Content-Length: 100000000\r\n\r\n");
  await server.request(2, "ping");
  const started = performance.now();
  const pong = await server.next();
  assert.equal(pong.id, 2, "the ping after the bogus header is answered");
  assert.ok(performance.now() - started < BODY_STALL_MS + 5_000);
  await server.request(3, "tools/call", { name: "ping", arguments: {} });
  assert.equal((await server.next()).id, 3, "and the stream stays in step");
});

Deno.test("stdio server exits when its client closes stdin, even during a waiting sync", async () => {
  await using tmp = await tmpDir();
  // (A server of its own, whose log says when the sync waits: an entry of the resident bus ends
  // on EOF too, tests/transports/peerbus_test.ts.)
  await using server = rawServer(`${tmp.path}/bus.sqlite`, {
    AGENT_BUS_LOG_LEVEL: "debug",
    AGENT_BUS_STANDALONE: "1",
  });
  await server.request(1, "initialize", INIT_PARAMS);
  await server.next();
  const call = (id: number, name: string, args: Record<string, unknown>) =>
    server.request(id, "tools/call", { name, arguments: args });
  await call(2, "topic_create", { name: "t" });
  const created = await server.next();
  const topicId = (created.result as { structuredContent: { topic_id: string } }).structuredContent
    .topic_id;
  await call(3, "topic_join", { agent_name: "a", topic_id: topicId });
  await server.next();
  await call(4, "sync", { topic_id: topicId, wait_seconds: 300 });
  await until(() => server.stderr().includes("sync waiting"), { what: "the sync to wait" });
  await server.closeStdin();
  const status = await server.child.status;
  assert.equal(status.code, 0);
});
