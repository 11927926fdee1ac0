/**
 * Chatbus agents in separate server processes catching up and sharing an
 * identity: an agent that joins a long thread, or falls far behind, posts
 * after one read (the newest messages that fit, the latest `current_seq`,
 * and a count of what was left out); a `msg_wait` that times out in one
 * session leaves the token another session of the same agent holds usable;
 * agents racing to post each get their turn.
 */

import assert from "node:assert/strict";
import { connectAgent, post, strictLoop, wait } from "../_helpers/chat.ts";
import { YIELD_MS } from "../../lib/bus/chat/turns.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const CHATBUS = ["--profile", "chatbus"];

Deno.test("an agent joining a 300-message thread, or 300 behind in msg_wait, posts after one read", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, args: CHATBUS });
  await using b = await startPeer({ dbPath, args: CHATBUS });
  const alice = await connectAgent(a, "long thread");
  for (let i = 1; i <= 300; i++) await post(alice, `message ${i}: ${"context ".repeat(12)}`);

  // Joining: one read, then a post that succeeds.
  const bob = await connectAgent(b, "long thread");
  const shown = (bob.result.messages as { seq: number }[]).map((m) => m.seq);
  assert.equal(shown.at(-1), 300);
  const skipped = bob.result.skipped_messages as { count: number; through_seq: number };
  assert.equal(skipped.count, shown[0]! - 1, "everything before the window is counted");
  assert.equal(bob.seq, 300);
  await post(bob, "caught up in one read");

  // Falling behind: 300 more while Bob is away; one msg_wait, then a post.
  const from = bob.seq;
  await wait(alice, { timeoutMs: 10_000 }); // Alice reads Bob's post before she goes on
  for (let i = 1; i <= 300; i++) await post(alice, `later ${i}: ${"context ".repeat(12)}`);
  const caught = await wait(bob, { afterSeq: from, timeoutMs: 10_000 });
  assert.equal(caught.messages.at(-1)!.seq, 601);
  assert.equal(caught.sync.current_seq, 601);
  assert.match(caught.skippedText ?? "", /\d+ earlier messages, seq 302-\d+/);
  await post(bob, "caught up again");

  // A message that commits after the read is not skipped: the post fails with it.
  const reread = await wait(bob, { afterSeq: 0, timeoutMs: 10_000 });
  await wait(alice, { timeoutMs: 10_000 });
  await post(alice, "sneaked in");
  const refused = await b.fail("msg_post", {
    thread_id: bob.threadId,
    author: bob.agentId,
    content: "I did not see the last one",
    expected_last_seq: reread.sync.current_seq,
    reply_token: reread.sync.reply_token,
  });
  assert.equal(refused.code, "SeqMismatchError");
});

Deno.test("a msg_wait that times out in another session leaves the agent's live token usable", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using one = await startPeer({ dbPath, args: CHATBUS });
  await using two = await startPeer({ dbPath, args: CHATBUS });
  const alice = await connectAgent(one, "two sessions");
  for (let round = 0; round < 3; round++) {
    const other = await two.call("msg_wait", {
      thread_id: alice.threadId,
      after_seq: alice.seq,
      timeout_ms: 50,
      agent_id: alice.agentId,
      token: alice.token,
      return_format: "json",
    });
    assert.ok(!other.isError, JSON.stringify(other.content));
    // Session one still posts with the token it holds.
    await post(alice, `round ${round}`);
  }
});

Deno.test(
  "four agents racing in the strict loop each make a fair share of the posts",
  async () => {
    await using tmp = await tmpDir();
    const dbPath = `${tmp.path}/bus.sqlite`;
    const peers = await Promise.all([0, 1, 2, 3].map(() => startPeer({ dbPath, args: CHATBUS })));
    try {
      const agents = [];
      for (const peer of peers) agents.push(await connectAgent(peer, "race"));
      const tally = await strictLoop(agents, 200);
      const total = tally.posts.reduce((a, b) => a + b, 0);
      // The bench row holds the 15 % target on a quiet machine (and the shares are 24-26 % there).
      // During a parallel test run they vary more: the worst seen was 7.5 %, so the floor here is
      // 5 % (before fair turns one agent of four made 0-4 %).
      assert.ok(
        tally.posts.every((n) => n >= total * 0.05),
        `posts per agent ${tally.posts.join(" / ")}: every agent makes at least 5 %`,
      );
    } finally {
      await Promise.all(peers.map((peer) => peer.close()));
    }
  },
);

Deno.test("an agent that only reads never slows another agent's posts in a row", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await startPeer({ dbPath, args: CHATBUS });
  await using b = await startPeer({ dbPath, args: CHATBUS });
  const writer = await connectAgent(a, "one voice");
  const reader = await connectAgent(b, "one voice");
  const postMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await post(writer, `update ${i}`);
    postMs.push(performance.now() - started);
    await wait(reader, { timeoutMs: 10_000 }); // the reader reads each one and holds a token
  }
  // A post that gives way to a reader waits YIELD_MS (the reader never posts, so the thread does
  // not move on), every time: most of these posts would take that long. A busy machine slows some.
  const gaveWay = postMs.filter((ms) => ms >= YIELD_MS).length;
  assert.ok(gaveWay < 10, `${gaveWay} of 20 posts took ${YIELD_MS} ms or more: ${postMs}`);
});
