/**
 * No chatbus session can act on another agent's state without its
 * credentials: a refused `msg_post` naming another agent as `author` leaves
 * that agent's tokens alone (agents in separate server processes), and
 * `msg_react` / `msg_unreact` in another agent's name need its token; a
 * message's reactions are bounded.
 */

import assert from "node:assert/strict";
import { connectAgent, post } from "../_helpers/chat.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { MAX_REACTIONS_PER_MESSAGE } from "../../lib/bus/chat/read.ts";

Deno.test("msg_post: a refused post naming another agent as author does not retire that agent's token", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  const args = ["--profile", "chatbus"];
  await using a = await startPeer({ dbPath, args });
  await using mallory = await startPeer({ dbPath, args });
  const alice = await connectAgent(a, "forgery");
  for (let i = 0; i < 10; i++) {
    for (
      const forged of [
        { reply_token: `made-up-${i}`, expected_last_seq: alice.seq },
        { reply_token: `made-up-${i}` },
        {},
      ]
    ) {
      const refused = await mallory.fail("msg_post", {
        thread_id: alice.threadId,
        author: alice.agentId,
        content: "I am Alice",
        ...forged,
      });
      assert.match(refused.code, /ReplyTokenInvalidError|MissingSyncFieldsError/);
    }
  }
  // Alice's own token from bus_connect still posts, and the chain goes on.
  const posted = await post(alice, "still me");
  assert.equal(posted.seq, 1);
  await post(alice, "and again");

  // Alice's own mistake (her token, a stale seq) does retire her tokens, as the protocol says.
  const stale = await a.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "stale",
    expected_last_seq: 0,
    reply_token: alice.replyToken,
  });
  assert.equal(stale.code, "SeqMismatchError");
  const retired = await a.fail("msg_post", {
    thread_id: alice.threadId,
    author: alice.agentId,
    content: "stale",
    expected_last_seq: alice.seq,
    reply_token: alice.replyToken,
  });
  assert.match(retired.code, /ReplyToken(Replay|Invalid)Error/);
});

Deno.test("msg_react: another agent's name needs its token; a message takes a bounded number of reactions", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using a = await connectInProcess(dbPath, "chatbus");
  await using other = await connectInProcess(dbPath, "chatbus");
  const alice = await connectAgent(a, "reactions");
  const id = (await post(alice, "react to me")).msg_id as string;

  for (const creds of [{}, { token: "wrong" }]) {
    const refused = await other.fail("msg_react", {
      message_id: id,
      reaction: "👎",
      agent_id: alice.agentId,
      ...creds,
    });
    assert.equal(refused.code, "AUTHENTICATION_REQUIRED");
  }
  assert.equal(
    (await other.fail("msg_react", { message_id: id, reaction: "x" })).code,
    "AUTHENTICATION_REQUIRED",
    "a connection without an agent names one",
  );
  const mine = await a.ok("msg_react", { message_id: id, reaction: "👍" });
  assert.equal(mine.agent_id, alice.agentId);
  const proven = await other.ok("msg_react", {
    message_id: id,
    reaction: "🎉",
    agent_id: alice.agentId,
    token: alice.token,
  });
  assert.equal(proven.added, true);
  const unreactRefused = await other.fail("msg_unreact", {
    message_id: id,
    reaction: "👍",
    agent_id: alice.agentId,
  });
  assert.equal(unreactRefused.code, "AUTHENTICATION_REQUIRED");
  const reactions = (await a.ok("msg_get", { message_id: id })).message as { reactions: unknown[] };
  assert.equal(reactions.reactions.length, 2, "nothing was added or removed by the refused calls");

  for (let i = reactions.reactions.length; i < MAX_REACTIONS_PER_MESSAGE; i++) {
    await a.ok("msg_react", { message_id: id, reaction: `r${i}` });
  }
  const over = await a.fail("msg_react", { message_id: id, reaction: "one too many" });
  assert.equal(over.code, "INVALID_ARGUMENT");
  assert.match(over.message, /100 reactions/);
  assert.equal(
    (await a.ok("msg_react", { message_id: id, reaction: "👍" })).added,
    false,
    "an existing reaction is still idempotent at the bound",
  );
});
