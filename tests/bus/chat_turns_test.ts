/**
 * Fair turns in a chatbus thread: agents whose posts were refused get their
 * turns in the order of their first refusal, and an agent owed a turn that
 * does not take it holds a post up for {@linkcode YIELD_MS} at most, and
 * nobody once it stopped racing. An agent that lost a race reads on after
 * the agent owed a turn before it has posted, so it races for the next
 * message instead of losing again.
 */

import assert from "node:assert/strict";
import { busConnect } from "../../lib/bus/chat/connect.ts";
import { postMessage } from "../../lib/bus/chat/post.ts";
import { OWED_AFTER_MS, RACING_MS, YIELD_MS } from "../../lib/bus/chat/turns.ts";
import { waitMessages } from "../../lib/bus/chat/wait.ts";
import { Session } from "../../lib/bus/session.ts";
import { BusError } from "../../lib/errors.ts";
import { openTestBus, type TestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** One agent in one session, with the sync context it last got. */
class Agent {
  readonly session = new Session();
  agentId = "";
  token = "";
  threadId = "";
  seq = 0;
  replyToken = "";

  constructor(readonly bus: TestBus) {}

  async connect(thread: string): Promise<this> {
    const connected = await busConnect(this.bus, this.session, {
      thread_name: thread,
      ide: "test",
      model: "m",
    });
    this.agentId = connected.agent.agent_id;
    this.token = connected.agent.token;
    this.threadId = connected.thread.thread_id;
    this.seq = connected.current_seq;
    this.replyToken = connected.reply_token;
    return this;
  }

  /** Post with the context it holds; the refusal's code, or undefined when it landed. */
  async post(content: string): Promise<string | undefined> {
    try {
      const posted = await postMessage(this.bus, this.session, {
        thread_id: this.threadId,
        author: this.agentId,
        content,
        expected_last_seq: this.seq,
        reply_token: this.replyToken,
      });
      this.seq = posted.current_seq!;
      this.replyToken = posted.reply_token!;
      return undefined;
    } catch (error) {
      if (error instanceof BusError) return error.code;
      throw error;
    }
  }

  /** `msg_wait` from what it has seen; the contents it was given. */
  async read(timeoutMs = 0): Promise<string[]> {
    const read = await waitMessages(this.bus, this.session, {
      thread_id: this.threadId,
      after_seq: this.seq,
      timeout_ms: timeoutMs,
      agent_id: this.agentId,
      token: this.token,
    });
    this.seq = read.sync.current_seq;
    this.replyToken = read.sync.reply_token;
    return read.messages.map((listed) => listed.message.content);
  }
}

Deno.test("refused agents take their turns in the order of their first refusal", async () => {
  await using tmp = await tmpDir();
  let clock = 1_800_000_000;
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, {}, { now: () => clock });
  const alice = await new Agent(bus).connect("turns");
  const bob = await new Agent(bus).connect("turns");
  const carol = await new Agent(bus).connect("turns");
  clock += 1;
  assert.equal(await alice.post("first"), undefined);
  clock += 1;
  assert.equal(await bob.post("bob, stale"), "SeqMismatchError");
  clock += 1;
  assert.equal(await carol.post("carol, stale"), "SeqMismatchError");
  await bob.read();
  await carol.read();
  clock += 1;
  // Carol asks first, but Bob was refused first: Carol waits, Bob lands, Carol is refused.
  const [carolPost, bobPost] = await Promise.all([carol.post("carol"), bob.post("bob")]);
  assert.equal(bobPost, undefined);
  assert.equal(carolPost, "SeqMismatchError");

  // Carol is owed a turn but does not take it: Alice waits for her at most YIELD_MS.
  await alice.read();
  clock += 1;
  const waited = await postTakes(alice);
  assert.ok(waited >= YIELD_MS * 0.9 && waited < YIELD_MS * 10, `waited ${waited} ms`);

  // She still races for RACING_MS after her refusal; then she holds nobody up.
  clock += 1;
  assert.ok(await postTakes(alice) >= YIELD_MS * 0.9);
  clock += RACING_MS / 1000;
  assert.ok(await postTakes(alice) < YIELD_MS * 0.9);
});

/** How long the agent's post took, in milliseconds; it must land. */
async function postTakes(agent: Agent): Promise<number> {
  const started = performance.now();
  assert.equal(await agent.post("another"), undefined);
  return performance.now() - started;
}

Deno.test("one lost race is the price of racing: others wait only for an agent that kept losing", async () => {
  await using tmp = await tmpDir();
  let clock = 1_800_000_000;
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, {}, { now: () => clock });
  const alice = await new Agent(bus).connect("price");
  const bob = await new Agent(bus).connect("price");
  clock += 1;
  assert.equal(await alice.post("first"), undefined);
  assert.equal(await bob.post("bob, stale"), "SeqMismatchError");
  await bob.read();
  // Bob lost one race this instant: Alice's next post does not wait for him.
  assert.ok(await postTakes(alice) < YIELD_MS * 0.9);
  // Still losing OWED_AFTER_MS later, he is owed a turn: Alice gives way to him.
  clock += OWED_AFTER_MS / 1000;
  const [alicePost, bobPost] = await Promise.all([
    alice.post("alice"),
    bob.post("bob, stale again"),
  ]);
  assert.equal(bobPost, "SeqMismatchError", "his context was stale: he lost again");
  assert.equal(alicePost, undefined);
  await bob.read();
  clock += 0.001;
  const [aliceNext, bobTurn] = await Promise.all([alice.post("alice again"), bob.post("bob")]);
  assert.equal(bobTurn, undefined, "Bob, owed, took his turn");
  assert.equal(aliceNext, "SeqMismatchError", "Alice waited for him, then read his post first");
});

Deno.test("a refused agent's msg_wait returns after the agent owed a turn before it posts, and its next post lands", async () => {
  await using tmp = await tmpDir();
  let clock = 1_800_000_000;
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, {}, { now: () => clock });
  const alice = await new Agent(bus).connect("order");
  const bob = await new Agent(bus).connect("order");
  const carol = await new Agent(bus).connect("order");
  clock += 1;
  assert.equal(await alice.post("first"), undefined);
  assert.equal(await bob.post("bob, stale"), "SeqMismatchError");
  clock += 0.001;
  assert.equal(await carol.post("carol, stale"), "SeqMismatchError");
  clock += OWED_AFTER_MS / 1000;

  // Carol lost after Bob did: her msg_wait holds until Bob has taken his turn.
  let carolRead = false;
  const carolReads = carol.read(60_000).finally(() => carolRead = true);
  assert.deepEqual(await bob.read(), ["first"]);
  assert.equal(carolRead, false, "Carol's msg_wait waits for Bob's turn");
  assert.equal(await bob.post("bob"), undefined);
  assert.deepEqual(await carolReads, ["first", "bob"], "she reads his post with the rest");
  assert.equal(await carol.post("carol"), undefined, "so her post lands instead of losing again");

  // Owed a turn and not taking it, Bob holds her msg_wait up for YIELD_MS at most.
  assert.equal(await bob.post("bob, stale again"), "SeqMismatchError");
  clock += 0.001;
  assert.equal(await alice.post("alice, stale"), "SeqMismatchError");
  clock += OWED_AFTER_MS / 1000;
  const started = performance.now();
  assert.deepEqual(await alice.read(60_000), ["bob", "carol"]);
  const waited = performance.now() - started;
  assert.ok(waited >= YIELD_MS * 0.9 && waited < YIELD_MS * 10, `waited ${waited} ms`);
});
