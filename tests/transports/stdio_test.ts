/**
 * The stdio transport at the byte level: a real server process fed raw
 * lines, including ones a well-behaved client would never send.
 */

import assert from "node:assert/strict";
import { serverCommand, until } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** A server process with line-level access to its stdin and stdout. */
function rawServer(dbPath: string, env: Record<string, string> = {}) {
  const [command, ...args] = serverCommand(dbPath);
  const child = new Deno.Command(command!, {
    args,
    env: { AGENT_BUS_DB: dbPath, NO_COLOR: "1", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  let stderr = "";
  const stderrDone = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += chunk) }),
  ).catch(() => {});
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const encoder = new TextEncoder();
  return {
    child,
    stderr: () => stderr,
    async send(text: string) {
      await writer.write(encoder.encode(text));
    },
    async request(id: number, method: string, params: unknown = {}) {
      await writer.write(
        encoder.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"),
      );
    },
    async next(): Promise<Record<string, unknown>> {
      for (;;) {
        const cut = buffered.indexOf("\n");
        if (cut !== -1) {
          const line = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 1);
          return JSON.parse(line);
        }
        const { value, done } = await lines.read();
        if (done) throw new Error("stdout closed");
        buffered += value;
      }
    },
    async closeStdin() {
      await writer.close();
    },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await child.status;
      await lines.cancel().catch(() => {});
      await stderrDone;
    },
  };
}

const INIT = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "0" },
};

Deno.test("stdio server answers bad lines with JSON-RPC errors and keeps serving", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`);
  await server.request(1, "initialize", INIT);
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

  await server.request(2, "tools/call", { name: "ping", arguments: {} });
  const pong = await server.next();
  assert.equal(pong.id, 2);
  assert.equal((pong.result as { structuredContent: { ok: boolean } }).structuredContent.ok, true);
});

Deno.test("stdio server drops an oversized line, answers its id, and keeps serving", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`, {
    AGENT_BUS_MAX_OUTBOX: "1",
    AGENT_BUS_MAX_MESSAGE_CHARS: "10",
  });
  await server.request(1, "initialize", INIT);
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

Deno.test("stdio server exits when its client closes stdin, even during a waiting sync", async () => {
  await using tmp = await tmpDir();
  await using server = rawServer(`${tmp.path}/bus.sqlite`, { AGENT_BUS_LOG_LEVEL: "debug" });
  await server.request(1, "initialize", INIT);
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
