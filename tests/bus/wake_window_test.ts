/**
 * No wake is lost: for every kind of wait (sync, ask, teacher_drain, the
 * mailbox push behind check_mail, watch, the console's event stream), a
 * commit from another connection is forced into the window between the
 * wait's last check and the start of its wait (the change feed's
 * `beforeWait` seam), and the wait must still end with what was committed,
 * well before its own timeout. A second `Store` on the same file is a
 * separate SQLite connection: to the waiter it is another process.
 */

import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { followTopic } from "../../lib/bus/follow.ts";
import { sendMail } from "../../lib/bus/mail.ts";
import type { Message } from "../../lib/bus/messages.ts";
import { joinTopic } from "../../lib/bus/names.ts";
import { ask, drainQuestions, publishAnswers } from "../../lib/bus/qa.ts";
import { type Identity, Session } from "../../lib/bus/session.ts";
import { sync } from "../../lib/bus/sync.ts";
import { createTopic } from "../../lib/bus/topics.ts";
import { EventHub, eventStream } from "../../lib/console/events.ts";
import { profile } from "../../lib/mcp/profiles/mod.ts";
import { createServer } from "../../lib/mcp/server.ts";
import { openTestBus, openTestSearch, type TestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Far above any real wake-up (milliseconds) and far below the waits' own timeouts. */
const WAKE_BUDGET_MS = 8_000;
/** The waits' own timeouts: reaching one means the wake was lost. */
const WAIT_SECONDS = 30;

/**
 * A waiter bus and an "other process" bus on one file. The waiter's first
 * wait runs `commit` (on the other bus) in its window, once.
 */
async function withWindow(
  body: (ctx: {
    waiter: TestBus;
    other: TestBus;
    inWindow(commit: () => Promise<unknown>): void;
    fired(): boolean;
  }) => Promise<void>,
): Promise<void> {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  let pending: (() => Promise<unknown>) | undefined;
  let fired = false;
  await using waiter = openTestBus(path, {}, {
    changes: {
      beforeWait: async () => {
        const commit = pending;
        pending = undefined;
        if (commit) {
          fired = true;
          await commit();
        }
      },
    },
  });
  await using other = openTestBus(path);
  await body({
    waiter,
    other,
    inWindow: (commit) => void (pending = commit),
    fired: () => fired,
  });
}

/** `promise`, or a rejection naming `what` when it takes longer than the wake budget. */
async function promptly<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: the wake was lost`)),
      WAKE_BUDGET_MS,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Send one message as `identity` (a peer of `bus`), without waiting. */
function post(bus: TestBus, identity: Identity, text: string) {
  return sync(bus, identity, {
    topicId: identity.topicId,
    outbox: [{ content_markdown: text }],
    maxItems: 1,
    includeSelf: false,
    waitSeconds: 0,
    autoAdvance: true,
  });
}

async function joined(bus: TestBus, topicId: string, agentName: string) {
  const session = new Session();
  await joinTopic(bus, session, { agentName, topicId, allowClosed: false });
  return session.require(topicId);
}

Deno.test("sync() wakes for a message committed between its check and its wait", async () => {
  await withWindow(async ({ waiter, other, inWindow, fired }) => {
    const { topic } = await createTopic(waiter, { name: "window", mode: "new" });
    const reader = await joined(waiter, topic.topic_id, "reader");
    const writer = await joined(other, topic.topic_id, "writer");
    inWindow(() => post(other, writer, "in the window"));
    const result = await promptly(
      "sync",
      sync(waiter, reader, {
        topicId: topic.topic_id,
        outbox: [],
        maxItems: 5,
        includeSelf: false,
        waitSeconds: WAIT_SECONDS,
        autoAdvance: true,
      }),
    );
    assert.ok(fired(), "the commit ran inside the window");
    assert.equal(result.status, "ready");
    assert.equal(result.received[0]?.content_markdown, "in the window");
  });
});

Deno.test("ask() wakes for an answer committed between its check and its wait", async () => {
  await withWindow(async ({ waiter, other, inWindow, fired }) => {
    const { topic } = await createTopic(waiter, { name: "qa-window", mode: "new" });
    inWindow(async () => {
      const { pending } = await drainQuestions(other, {
        topicId: topic.topic_id,
        limit: 5,
        waitSeconds: 0,
      });
      await publishAnswers(other, {
        topicId: topic.topic_id,
        answeredBy: "teacher",
        responses: [{
          question_id: pending[0]!.question_id,
          answer_markdown: "answered in the window",
          suggested_followups: ["next?"],
        }],
      });
    });
    const { state } = await promptly(
      "ask",
      ask(waiter, {
        topicId: topic.topic_id,
        question: "Where is the store?",
        askedBy: "student",
        waitSeconds: WAIT_SECONDS,
      }),
    );
    assert.ok(fired());
    assert.equal(state.status, "answered");
    assert.equal(state.answer_payload?.answer_markdown, "answered in the window");
  });
});

Deno.test("drainQuestions() wakes for a question committed between its check and its wait", async () => {
  await withWindow(async ({ waiter, other, inWindow, fired }) => {
    const { topic } = await createTopic(waiter, { name: "drain-window", mode: "new" });
    inWindow(() =>
      ask(other, {
        topicId: topic.topic_id,
        question: "asked in the window",
        askedBy: "student",
        waitSeconds: 0,
      })
    );
    const { pending } = await promptly(
      "teacher_drain",
      drainQuestions(waiter, { topicId: topic.topic_id, limit: 5, waitSeconds: WAIT_SECONDS }),
    );
    assert.ok(fired());
    assert.equal(pending[0]?.question_text, "asked in the window");
  });
});

Deno.test("the mailbox push (check_mail's wake) announces mail committed in the window", async () => {
  await withWindow(async ({ waiter, other, inWindow, fired }) => {
    await using search = openTestSearch(waiter);
    const created = createServer(profile("peerbus"), { bus: waiter, search }, { agent: "bob" });
    const client = new Client({ name: "window-test", version: "1" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await created.server.connect(serverSide);
    await client.connect(clientSide);
    try {
      const updated = Promise.withResolvers<string>();
      client.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        (n) => updated.resolve(n.params.uri),
      );
      inWindow(() =>
        sendMail(other, {
          from: "alice",
          to: "bob",
          content: "mail in the window",
          format: "text",
          source: "cli",
        })
      );
      await client.subscribeResource({ uri: "mailbox://bob" });
      assert.equal(await promptly("mailbox push", updated.promise), "mailbox://bob");
      assert.ok(fired());
    } finally {
      await client.close();
      await created.close();
    }
  });
});

Deno.test("followTopic() (agent-bus watch) shows a message committed in the window", async () => {
  await withWindow(async ({ waiter, other, inWindow, fired }) => {
    const { topic } = await createTopic(waiter, { name: "watch-window", mode: "new" });
    const writer = await joined(other, topic.topic_id, "writer");
    inWindow(() => post(other, writer, "watched in the window"));
    const stop = new AbortController();
    const seen = Promise.withResolvers<Message>();
    const following = followTopic(waiter, topic.topic_id, {
      afterSeq: 0,
      signal: stop.signal,
      onMessage: (message) => seen.resolve(message),
    });
    try {
      const message = await promptly("watch", seen.promise);
      assert.ok(fired());
      assert.equal(message.content_markdown, "watched in the window");
    } finally {
      stop.abort();
      await following;
    }
  });
});

Deno.test("the console's event stream sends a message committed in the window", async () => {
  await withWindow(async ({ waiter, other, inWindow, fired }) => {
    const { topic } = await createTopic(waiter, { name: "events-window", mode: "new" });
    const writer = await joined(other, topic.topic_id, "writer");
    inWindow(() => post(other, writer, "streamed in the window"));
    const stop = new AbortController();
    const hub = new EventHub(waiter);
    const response = eventStream(waiter, { hub, keepAliveMs: 60_000, signal: stop.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      const read = async (): Promise<string> => {
        let text = "";
        while (!text.includes("event: message")) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
        }
        return text;
      };
      const text = await promptly("event stream", read());
      assert.ok(fired());
      assert.match(text, /streamed in the window/);
    } finally {
      stop.abort();
      hub.close();
      await reader.cancel().catch(() => {});
    }
  });
});
