/**
 * Reply tokens stay bounded: each post issues one and consumes one, and a
 * holder's consumed tokens are dropped once they are past keeping, so the
 * table does not grow with the number of posts. Tokens have AgentChatBus's
 * formats and are stored as their SHA-256.
 */

import assert from "node:assert/strict";
import { hashSecret, newAgentToken, newReplyToken } from "../../lib/bus/chat/wire.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { connectPoster } from "../_helpers/chat.ts";
import { readRows } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("a chatbus agent's consumed reply tokens are dropped after ten minutes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  let clock = 1_800_000_000;
  await using bus = openTestBus(dbPath, {}, { now: () => clock });
  const agent = await connectPoster(bus, "tokens");
  const postOnce = (content: string) => agent.post(content);
  const tokens = async () =>
    Number((await readRows(dbPath, "SELECT COUNT(*) AS n FROM bus_reply_tokens"))[0]!.n);
  for (let i = 0; i < 50; i++) await postOnce(`post ${i}`);
  assert.equal(await tokens(), 51, "each post consumed one token and issued one");
  clock += 601;
  await postOnce("ten minutes later");
  assert.equal(await tokens(), 2, "only the token just consumed and the new one are left");
});

Deno.test("tokens are random in AgentChatBus's formats and stored only as their SHA-256", () => {
  assert.equal(
    hashSecret("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  const agentTokens = new Set(Array.from({ length: 50 }, newAgentToken));
  const replyTokens = new Set(Array.from({ length: 50 }, newReplyToken));
  assert.equal(agentTokens.size, 50);
  assert.equal(replyTokens.size, 50);
  for (const token of agentTokens) assert.match(token, /^[0-9a-f]{64}$/);
  for (const token of replyTokens) assert.match(token, /^[A-Za-z0-9_-]{32}$/);
});
