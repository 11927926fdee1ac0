/**
 * The tool contract through the SDK client (in process, but for the start-up warning):
 * discovery, schemas, error shapes, and garbage arguments.
 */

import assert from "node:assert/strict";
import { connectInProcess } from "../_helpers/in_process.ts";
import { startPeer, textOf } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const TOOLS = [
  "ping",
  "topic_create",
  "topic_list",
  "topic_resolve",
  "topic_close",
  "topic_join",
  "topic_presence",
  "cursor_reset",
  "messages_search",
  "sync",
];

type JsonSchema = {
  properties: Record<string, Record<string, unknown>>;
  anyOf?: unknown[];
};

Deno.test("tools/list publishes the ten tools with input and output schemas", async () => {
  await using tmp = await tmpDir();
  await using peer = await connectInProcess(`${tmp.path}/bus.sqlite`, "peer");
  const { tools } = await peer.client.listTools();
  assert.deepEqual(tools.map((t) => t.name), TOOLS);
  for (const tool of tools) {
    assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
    assert.ok(tool.description && tool.description.length > 20, `${tool.name} has a description`);
    assert.equal(tool.inputSchema.type, "object");
  }
  const sync = tools.find((t) => t.name === "sync")!.inputSchema as unknown as JsonSchema;
  assert.deepEqual(
    [
      sync.properties.max_items!.minimum,
      sync.properties.max_items!.maximum,
      sync.properties.max_items!.default,
    ],
    [1, 20, 20],
  );
  assert.equal(sync.properties.wait_seconds!.default, 60);
  const create = tools.find((t) => t.name === "topic_create")!.inputSchema as unknown as JsonSchema;
  assert.deepEqual(create.properties.mode!.enum, ["reuse", "new"]);
  const join = tools.find((t) => t.name === "topic_join")!;
  assert.match(join.description!, /exactly one of topic_id or name/);
  assert.match(join.description!, /reclaim_token/);
  const info = peer.client.getServerVersion();
  assert.equal(info?.name, "agent-bus");
  assert.match(peer.client.getInstructions() ?? "", /has_more=false/);
});

Deno.test("AGENT_BUS_MAX_SYNC_ITEMS shapes the sync schema; a bad value is reported and ignored", async () => {
  await using tmp = await tmpDir();
  await using three = await startPeer({
    dbPath: `${tmp.path}/a.sqlite`,
    env: { AGENT_BUS_MAX_SYNC_ITEMS: "3" },
  });
  const schema = (await three.client.listTools()).tools.find((t) => t.name === "sync")!
    .inputSchema as unknown as JsonSchema;
  assert.equal(schema.properties.max_items!.maximum, 3);
  assert.equal(schema.properties.max_items!.default, 3);
  await using bogus = await startPeer({
    dbPath: `${tmp.path}/b.sqlite`,
    env: { AGENT_BUS_MAX_SYNC_ITEMS: "bogus" },
  });
  assert.match(bogus.stderr(), /AGENT_BUS_MAX_SYNC_ITEMS="bogus"/);
  const topic = await bogus.ok("topic_create", { name: "t" });
  await bogus.ok("topic_join", { agent_name: "a", topic_id: topic.topic_id });
  const result = await bogus.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.equal(result.status, "empty");
});

Deno.test("ping answers with versions, the seed's text and the semantic index state", async () => {
  await using tmp = await tmpDir();
  await using peer = await connectInProcess(`${tmp.path}/bus.sqlite`, "peer");
  const result = await peer.call("ping");
  assert.deepEqual(Object.keys(result.structuredContent!).sort(), [
    "ok",
    "package_version",
    "semantic_index",
    "spec_version",
  ]);
  const index = result.structuredContent!.semantic_index as { model: string; state: string };
  assert.equal(index.model, "nomic-embed-text");
  assert.equal(result.structuredContent!.spec_version, "v6.3");
  assert.match(textOf(result), /^pong \(\d+\.\d+\.\d+/);
});

Deno.test("tools report TOPIC_NOT_FOUND, TOPIC_CLOSED and AGENT_NOT_JOINED", async () => {
  await using tmp = await tmpDir();
  await using peer = await connectInProcess(`${tmp.path}/bus.sqlite`, "peer");
  for (
    const [name, args] of [
      ["topic_join", { agent_name: "a", topic_id: "nope" }],
      ["topic_join", { agent_name: "a", name: "nope" }],
      ["topic_resolve", { name: "nope" }],
      ["topic_close", { topic_id: "nope" }],
      ["topic_presence", { topic_id: "nope" }],
    ] as const
  ) {
    assert.equal((await peer.fail(name, args)).code, "TOPIC_NOT_FOUND", name);
  }
  const topic = await peer.ok("topic_create", { name: "t" });
  const notJoined = await peer.fail("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.equal(notJoined.code, "AGENT_NOT_JOINED");
  assert.match(notJoined.text, /^AGENT_NOT_JOINED: /);
  assert.equal(
    (await peer.fail("cursor_reset", { topic_id: topic.topic_id })).code,
    "AGENT_NOT_JOINED",
  );
  await peer.ok("topic_join", { agent_name: "a", topic_id: topic.topic_id });
  const closed = await peer.ok("topic_close", { topic_id: topic.topic_id, reason: "done" });
  assert.equal(closed.status, "closed");
  const again = await peer.ok("topic_close", { topic_id: topic.topic_id });
  assert.deepEqual(again.warnings, [{
    code: "ALREADY_CLOSED",
    message: `Topic "${topic.topic_id}" was already closed`,
    context: { topic_id: topic.topic_id },
  }]);
  const refused = await peer.fail("sync", {
    topic_id: topic.topic_id,
    outbox: [{ content_markdown: "late" }],
    wait_seconds: 0,
  });
  assert.equal(refused.code, "TOPIC_CLOSED");
  const read = await peer.ok("sync", { topic_id: topic.topic_id, wait_seconds: 0 });
  assert.equal(read.status, "empty");
});

Deno.test("garbage arguments get INVALID_ARGUMENT and the server keeps answering", async () => {
  await using tmp = await tmpDir();
  await using peer = await connectInProcess(`${tmp.path}/bus.sqlite`, "peer");
  const topic = await peer.ok("topic_create", { name: "g" });
  await peer.ok("topic_join", { agent_name: "a", topic_id: topic.topic_id });
  const id = topic.topic_id;
  const huge = "x".repeat(1_000_000);
  const garbage: [string, Record<string, unknown>, RegExp][] = [
    ["sync", { topic_id: 42 }, /topic_id: expected string/],
    ["sync", { topic_id: id, max_items: "5" }, /max_items/],
    ["sync", { topic_id: id, max_items: 0 }, /max_items must be an int >= 1/],
    ["sync", { topic_id: id, max_items: 21 }, /max_items must be <= 20/],
    ["sync", { topic_id: id, max_items: 2.5 }, /max_items/],
    ["sync", { topic_id: id, wait_seconds: -1 }, /wait_seconds must be an int >= 0/],
    ["sync", { topic_id: id, bogus: true }, /unknown argument "bogus"/],
    ["sync", { topic_id: id, outbox: "not json" }, /outbox must be a list of objects/],
    [
      "sync",
      { topic_id: id, outbox: [{ content: "wrong field" }] },
      /content_markdown is required/,
    ],
    [
      "sync",
      { topic_id: id, outbox: [{ content_markdown: huge }] },
      /outbox\[0\]\.content_markdown exceeds max length \(65536\)/,
    ],
    ["sync", { topic_id: id, outbox: [{ content_markdown: "x", metadata: [1, 2] }] }, /metadata/],
    [
      "sync",
      { topic_id: id, outbox: [{ content_markdown: "x", reply_to: "missing" }] },
      /reply_to "missing" is not a message/,
    ],
    [
      "sync",
      { topic_id: id, outbox: Array(51).fill({ content_markdown: "x" }) },
      /more than 50 items/,
    ],
    ["sync", { topic_id: id, ack_through: 3 }, /ack_through requires auto_advance=false/],
    [
      "sync",
      { topic_id: id, auto_advance: false, ack_through: 3 },
      /ack_through exceeds latest message seq/,
    ],
    ["sync", {}, /topic_id is required/],
    ["topic_join", { agent_name: huge, topic_id: id }, /agent_name exceeds max length/],
    ["topic_join", { agent_name: "a", topic_id: id, name: "g" }, /exactly one of topic_id or name/],
    [
      "topic_join",
      { agent_name: "b", topic_id: id, reclaim_token: "   " },
      /reclaim_token must be a non-empty string/,
    ],
    ["topic_create", { name: huge }, /name exceeds max length/],
    ["topic_create", { name: "x", mode: "sometimes" }, /mode/],
    ["topic_create", { name: "x", metadata: "not an object" }, /metadata/],
    ["topic_list", { status: "pending" }, /status/],
    ["topic_presence", { topic_id: id, window_seconds: 0 }, /window_seconds must be an int > 0/],
    ["topic_presence", { topic_id: id, limit: -5 }, /limit must be an int > 0/],
    ["cursor_reset", { topic_id: id, last_seq: -1 }, /last_seq must be an int >= 0/],
    ["cursor_reset", { topic_id: id, last_seq: 5 }, /last_seq exceeds latest message seq/],
    ["messages_search", { query: "  " }, /query must be a non-empty string/],
    ["messages_search", { query: "x", limit: 0 }, /limit must be an int > 0/],
    ["messages_search", { query: "x", mode: "vector" }, /mode/],
    ["messages_search", { query: huge }, /query exceeds max length/],
    ["ping", { unexpected: 1 }, /unknown argument "unexpected"/],
    ["no_such_tool", {}, /Unknown tool "no_such_tool"/],
  ];
  for (const [name, args, pattern] of garbage) {
    const failure = await peer.fail(name, args);
    assert.equal(failure.code, "INVALID_ARGUMENT", `${name} ${JSON.stringify(args).slice(0, 80)}`);
    assert.match(failure.message, pattern, `${name}: ${failure.message}`);
  }
  const found = await peer.ok("messages_search", { query: 'foo-bar "( NOT', mode: "fts" });
  assert.equal(found.count, 0, "FTS syntax in a query is searched as text, not an error");
  assert.equal((await peer.ok("ping")).ok, true, "the server is still answering");
  const list = await peer.ok("topic_list", {});
  assert.equal(list.count, 1, "no garbage topic was created");
});

Deno.test("sync text lists sent ids and received bodies for text-only clients", async () => {
  await using tmp = await tmpDir();
  await using peer = await connectInProcess(`${tmp.path}/bus.sqlite`, "peer");
  const topic = await peer.ok("topic_create", { name: "text" });
  await peer.ok("topic_join", { agent_name: "a", topic_id: topic.topic_id });
  const sent = await peer.call("sync", {
    topic_id: topic.topic_id,
    outbox: { content_markdown: "a single object is accepted", message_type: "question" },
    include_self: true,
    wait_seconds: 0,
  });
  const text = textOf(sent);
  assert.match(text, /^Sync: status=ready received=1 sent=1 cursor=1 has_more=false/);
  assert.match(text, /\[1\] a \(question\) id=[0-9a-f]{12}\na single object is accepted/);
});
