/**
 * Tests of `sync()` semantics on a real database, in process: idempotent
 * sends, seqs, reply_to, acknowledgements, batching and long-polling.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { BusError } from "../../lib/errors.ts";
import { joinTopic } from "../../lib/bus/names.ts";
import { Session } from "../../lib/bus/session.ts";
import { sync, type SyncArgs } from "../../lib/bus/sync.ts";
import { closeTopic, createTopic } from "../../lib/bus/topics.ts";
import { openTestBus, type TestBus } from "../_helpers/bus.ts";
import { until } from "../_helpers/peer.ts";
import { sqliteTest } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

async function setup(bus: TestBus, names: string[]) {
  const { topic } = await createTopic(bus, { name: "t", mode: "new" });
  const peers = [];
  for (const agentName of names) {
    const session = new Session();
    await joinTopic(bus, session, { agentName, topicId: topic.topic_id, allowClosed: false });
    peers.push(session.require(topic.topic_id));
  }
  return { topicId: topic.topic_id, peers };
}

function args(topicId: string, more: Partial<SyncArgs> = {}): SyncArgs {
  return {
    topicId,
    outbox: [],
    maxItems: 20,
    includeSelf: false,
    waitSeconds: 0,
    autoAdvance: true,
    ...more,
  };
}

/**
 * Count, from now on, the write transactions the bus's store runs for
 * `topicId` (the store itself still runs them; the search index's upkeep,
 * which names no topic, is not counted).
 */
function countTopicWrites(bus: TestBus, topicId: string): () => number {
  const store = bus.store;
  const immediate = store.immediate.bind(store);
  let writes = 0;
  store.immediate = (fn, options) => {
    if (options?.topics?.includes(topicId)) writes++;
    return immediate(fn, options);
  };
  return () => writes;
}

async function rejectsWith(promise: Promise<unknown>, code: string, pattern?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof BusError, `expected BusError, got ${error}`);
    assert.equal(error.code, code);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

Deno.test("sync() assigns consecutive seqs in outbox order and hides own messages", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  const sent = await sync(
    bus,
    a!,
    args(topicId, {
      outbox: [{ content_markdown: "one" }, { content_markdown: "two", message_type: "question" }],
    }),
  );
  assert.deepEqual(sent.sent.map((s) => [s.message.seq, s.duplicate]), [[1, false], [2, false]]);
  assert.equal(sent.sent[1]!.message.message_type, "question");
  assert.equal(sent.sent[0]!.message.sender, "a");
  assert.equal(sent.received_count, 0);
  assert.equal(sent.status, "empty");
  const got = await sync(bus, b!, args(topicId));
  assert.deepEqual(got.received.map((m) => m.content_markdown), ["one", "two"]);
  assert.equal(got.status, "ready");
  assert.equal(got.cursor.last_seq, 2);
  const self = await sync(bus, a!, args(topicId, { includeSelf: true }));
  assert.equal(self.received.length, 2);
});

Deno.test("sync() returns the stored message for a repeated client_message_id", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  const first = await sync(
    bus,
    a!,
    args(topicId, {
      outbox: [{ content_markdown: "hi", client_message_id: "k1" }],
    }),
  );
  const again = await sync(
    bus,
    a!,
    args(topicId, {
      outbox: [
        { content_markdown: "different body", client_message_id: "k1" },
        { content_markdown: "new", client_message_id: "k2" },
        { content_markdown: "new again", client_message_id: "k2" },
      ],
    }),
  );
  assert.equal(again.sent[0]!.duplicate, true);
  assert.equal(again.sent[0]!.message.message_id, first.sent[0]!.message.message_id);
  assert.equal(again.sent[0]!.message.content_markdown, "hi");
  assert.equal(again.sent[1]!.message.seq, 2, "a duplicate allocates no seq");
  assert.equal(again.sent[2]!.duplicate, true, "duplicates within one outbox are caught");
  const got = await sync(bus, b!, args(topicId));
  assert.deepEqual(got.received.map((m) => m.seq), [1, 2]);
});

Deno.test("sync() checks reply_to exists in the same topic and stores nothing otherwise", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  const other = await setup(bus, ["c"]);
  const q = await sync(bus, a!, args(topicId, { outbox: [{ content_markdown: "q?" }] }));
  const foreign = await sync(
    bus,
    other.peers[0]!,
    args(other.topicId, {
      outbox: [{ content_markdown: "elsewhere" }],
    }),
  );
  await rejectsWith(
    sync(
      bus,
      b!,
      args(topicId, {
        outbox: [
          { content_markdown: "fine", reply_to: q.sent[0]!.message.message_id },
          { content_markdown: "bad", reply_to: foreign.sent[0]!.message.message_id },
        ],
      }),
    ),
    "INVALID_ARGUMENT",
    /outbox\[1\]\.reply_to/,
  );
  const got = await sync(bus, a!, args(topicId));
  assert.equal(got.received.length, 0, "the failed call rolled back its first item too");
  const ok = await sync(
    bus,
    b!,
    args(topicId, {
      outbox: [{
        content_markdown: "answer",
        message_type: "answer",
        reply_to: q.sent[0]!.message.message_id,
      }],
    }),
  );
  assert.equal(ok.sent[0]!.message.reply_to, q.sent[0]!.message.message_id);
});

Deno.test("sync() pages with max_items and has_more", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  const outbox = Array.from({ length: 25 }, (_, i) => ({ content_markdown: `m${i + 1}` }));
  await sync(bus, a!, args(topicId, { outbox }));
  const page1 = await sync(bus, b!, args(topicId, { maxItems: 20 }));
  assert.equal(page1.received.length, 20);
  assert.equal(page1.has_more, true);
  const page2 = await sync(bus, b!, args(topicId, { maxItems: 20 }));
  assert.deepEqual(page2.received.map((m) => m.seq), [21, 22, 23, 24, 25]);
  assert.equal(page2.has_more, false);
});

Deno.test("sync() keeps one batch within the result budget and flags has_more", async () => {
  await using tmp = await tmpDir();
  // Each 400-character body costs 400 bytes plus 300 of overhead and its sender's name:
  // two fit in 1,500 bytes, three do not.
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, {
    AGENT_BUS_TOOL_RESULT_MAX_BYTES: "1500",
  });
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  const body = "x".repeat(400);
  await sync(
    bus,
    a!,
    args(topicId, { outbox: [1, 2, 3, 4].map(() => ({ content_markdown: body })) }),
  );
  const first = await sync(bus, b!, args(topicId));
  assert.equal(first.received.length, 2);
  assert.equal(first.has_more, true);
  assert.equal(first.cursor.last_seq, 2);
  const rest = await sync(bus, b!, args(topicId));
  assert.equal(rest.received.length, 2);
  assert.equal(rest.has_more, false);
});

Deno.test("sync() with auto_advance=false repeats a batch until ack_through", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  await sync(
    bus,
    a!,
    args(topicId, {
      outbox: [1, 2, 3].map((i) => ({ content_markdown: `m${i}` })),
    }),
  );
  const one = await sync(bus, b!, args(topicId, { autoAdvance: false, maxItems: 2 }));
  const two = await sync(bus, b!, args(topicId, { autoAdvance: false, maxItems: 2 }));
  assert.deepEqual(one.received.map((m) => m.seq), [1, 2]);
  assert.deepEqual(two.received.map((m) => m.seq), [1, 2]);
  assert.equal(two.cursor.last_seq, 0);
  const acked = await sync(bus, b!, args(topicId, { autoAdvance: false, ackThrough: 2 }));
  assert.deepEqual(acked.received.map((m) => m.seq), [3], "the ack applies before the read");
  assert.equal(acked.cursor.last_seq, 2);
  const lower = await sync(bus, b!, args(topicId, { autoAdvance: false, ackThrough: 1 }));
  assert.equal(lower.cursor.last_seq, 2, "an ack below the cursor is ignored");
  await rejectsWith(
    sync(bus, b!, args(topicId, { autoAdvance: false, ackThrough: 99 })),
    "INVALID_ARGUMENT",
    /ack_through exceeds latest message seq \(3\)/,
  );
  await rejectsWith(
    sync(bus, b!, args(topicId, { ackThrough: 1 })),
    "INVALID_ARGUMENT",
    /ack_through requires auto_advance=false/,
  );
});

Deno.test("sync() refuses to send to a closed topic but still reads it", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
  await sync(bus, a!, args(topicId, { outbox: [{ content_markdown: "last words" }] }));
  await closeTopic(bus, { topicId, reason: "done" });
  await rejectsWith(
    sync(bus, a!, args(topicId, { outbox: [{ content_markdown: "too late" }] })),
    "TOPIC_CLOSED",
  );
  const got = await sync(bus, b!, args(topicId));
  assert.deepEqual(got.received.map((m) => m.content_markdown), ["last words"]);
});

Deno.test("sync() validates outbox items with indexed messages", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, {
    AGENT_BUS_MAX_MESSAGE_CHARS: "10",
    AGENT_BUS_MAX_OUTBOX: "2",
  });
  const { topicId, peers: [a] } = await setup(bus, ["a"]);
  const cases: [SyncArgs["outbox"], RegExp][] = [
    [[{ content_markdown: "   " }], /outbox\[0\]\.content_markdown must be a non-empty string/],
    [
      [{ content_markdown: "ok" }, { content_markdown: "x".repeat(11) }],
      /outbox\[1\]\.content_markdown exceeds max length \(10\)/,
    ],
    [
      [{ content_markdown: "ok", message_type: " " }],
      /outbox\[0\]\.message_type must be a non-empty string/,
    ],
    [
      [{ content_markdown: "ok", message_type: "x".repeat(33) }],
      /outbox\[0\]\.message_type exceeds max length \(32\)/,
    ],
    [
      [{ content_markdown: "ok", client_message_id: "x".repeat(129) }],
      /client_message_id exceeds max length \(128\)/,
    ],
    [
      [{ content_markdown: "a" }, { content_markdown: "b" }, { content_markdown: "c" }],
      /the most is 2/,
    ],
  ];
  for (const [outbox, pattern] of cases) {
    await rejectsWith(sync(bus, a!, args(topicId, { outbox })), "INVALID_ARGUMENT", pattern);
  }
});

sqliteTest(
  "sync() waits without writing and wakes on a commit from this process",
  "counts commits with SQLite's data_version; on PostgreSQL the idle bench row counts queries",
  async () => {
    await using tmp = await tmpDir();
    const path = `${tmp.path}/bus.sqlite`;
    await using bus = openTestBus(path);
    const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
    const waiting = sync(bus, b!, args(topicId, { waitSeconds: 30 }));
    await until(() => bus.changes.waiting === 1, { what: "the call to wait" });
    // Another connection sees every commit as a change of data_version.
    const observer = new DatabaseSync(path, { readOnly: true });
    const version = () =>
      (observer.prepare("PRAGMA data_version").get() as { data_version: number }).data_version;
    const before = version();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the idle period under test
    assert.equal(version(), before, "nothing was written while waiting");
    await sync(bus, a!, args(topicId, { outbox: [{ content_markdown: "wake up" }] }));
    const got = await waiting;
    assert.equal(got.status, "ready");
    assert.equal(got.received[0]!.content_markdown, "wake up");
    observer.close();
  },
);

sqliteTest(
  "a waiting sync() is answered in the transaction of the send that wakes it",
  "followers ride along SQLite's lone writes; PostgreSQL's wake-ups come through its notifications",
  async () => {
    await using tmp = await tmpDir();
    await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
    const { topicId, peers: [a, b] } = await setup(bus, ["a", "b"]);
    const waiting = sync(bus, b!, args(topicId, { waitSeconds: 30 }));
    await until(() => bus.changes.waiting === 1, { what: "the call to wait" });
    const writes = countTopicWrites(bus, topicId);
    const sent = await sync(bus, a!, args(topicId, { outbox: [{ content_markdown: "wake up" }] }));
    const got = await waiting;
    assert.equal(got.status, "ready");
    assert.equal(got.received[0]!.content_markdown, "wake up");
    assert.equal(writes(), 1, "the send's transaction also moved the waiter's cursor");
    const seq = sent.sent[0]!.message.seq;
    assert.equal(got.cursor.last_seq, seq);
    const stored = bus.store.read(() =>
      bus.store.stmt("SELECT last_seq FROM cursors WHERE topic_id = ? AND agent_name = ?")
        .get(topicId, "b")
    );
    assert.equal(stored?.last_seq, seq, "the delivery is stored with the message");
    assert.equal(bus.changes.waiting, 0);
  },
);

sqliteTest(
  "a send answers at most eight waiting sync() calls in its transaction; the others wake as before",
  "followers ride along SQLite's lone writes; PostgreSQL's wake-ups come through its notifications",
  async () => {
    await using tmp = await tmpDir();
    await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
    const names = Array.from({ length: 11 }, (_, i) => `agent-${i}`);
    const { topicId, peers: [sender, ...waiters] } = await setup(bus, names);
    const waiting = waiters.map((peer) => sync(bus, peer!, args(topicId, { waitSeconds: 30 })));
    await until(() => bus.changes.waiting === 10, { what: "ten calls to wait" });
    const writes = countTopicWrites(bus, topicId);
    await sync(bus, sender!, args(topicId, { outbox: [{ content_markdown: "to all" }] }));
    const got = await Promise.all(waiting);
    for (const result of got) assert.equal(result.received[0]?.content_markdown, "to all");
    // The send with eight followers, then the two others' own rounds (together or apart).
    assert.ok(writes() >= 2 && writes() <= 3, `${writes()} write transactions`);
  },
);

Deno.test("sync() times out with status timeout and stops at once when aborted", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const { topicId, peers: [, b] } = await setup(bus, ["a", "b"]);
  const timedOut = await sync(bus, b!, args(topicId, { waitSeconds: 1 }));
  assert.equal(timedOut.status, "timeout");
  const controller = new AbortController();
  const waiting = sync(bus, b!, args(topicId, { waitSeconds: 60 }), { signal: controller.signal });
  controller.abort(new Error("cancelled"));
  await assert.rejects(waiting, /cancelled/);
  assert.equal(bus.changes.waiting, 0, "the aborted call no longer waits");
});

Deno.test("sync() caps wait_seconds at the configured maximum with a warning", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, { AGENT_BUS_MAX_WAIT_SECONDS: "1" });
  const { topicId, peers: [, b] } = await setup(bus, ["a", "b"]);
  const result = await sync(bus, b!, args(topicId, { waitSeconds: 100 }));
  assert.equal(result.status, "timeout");
  assert.equal(result.warnings[0]?.code, "WAIT_SECONDS_CAPPED");
  assert.deepEqual(result.warnings[0]?.context, { requested: 100, max: 1 });
});
