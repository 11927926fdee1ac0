/**
 * Reply tokens stay bounded: each post issues one and consumes one, and a
 * holder's consumed tokens are dropped once they are past keeping, so the
 * table does not grow with the number of posts.
 */

import assert from "node:assert/strict";
import { busConnect } from "../../lib/bus/chat/connect.ts";
import { postMessage } from "../../lib/bus/chat/post.ts";
import { Session } from "../../lib/bus/session.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { readRows } from "../_helpers/store.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("a chatbus agent's consumed reply tokens are dropped after ten minutes", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  let clock = 1_800_000_000;
  await using bus = openTestBus(dbPath, {}, { now: () => clock });
  const session = new Session();
  const connected = await busConnect(bus, session, { thread_name: "tokens", ide: "t", model: "m" });
  let context = { seq: connected.current_seq, token: connected.reply_token };
  const postOnce = async (content: string) => {
    const posted = await postMessage(bus, session, {
      thread_id: connected.thread.thread_id,
      author: connected.agent.agent_id,
      content,
      expected_last_seq: context.seq,
      reply_token: context.token,
    });
    context = { seq: posted.current_seq!, token: posted.reply_token! };
  };
  const tokens = async () =>
    Number((await readRows(dbPath, "SELECT COUNT(*) AS n FROM bus_reply_tokens"))[0]!.n);
  for (let i = 0; i < 50; i++) await postOnce(`post ${i}`);
  assert.equal(await tokens(), 51, "each post consumed one token and issued one");
  clock += 601;
  await postOnce("ten minutes later");
  assert.equal(await tokens(), 2, "only the token just consumed and the new one are left");
});
