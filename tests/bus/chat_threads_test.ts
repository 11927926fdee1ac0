/**
 * `thread_list` pages newest first without skipping or repeating a thread,
 * also when several threads were created in the same millisecond.
 */

import assert from "node:assert/strict";
import { busConnect } from "../../lib/bus/chat/connect.ts";
import { threadList } from "../../lib/bus/chat/threads.ts";
import { Session } from "../../lib/bus/session.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("thread_list pages through threads created in the same millisecond, each once", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`, {}, { now: () => 1_800_000_000.123 });
  const names = ["t0", "t1", "t2", "t3", "t4", "t5", "t6"];
  for (const name of names) {
    await busConnect(bus, new Session(), { thread_name: name, ide: "t", model: "m" });
  }
  const listed: string[] = [];
  let before: string | undefined;
  for (let page = 0; page < names.length; page++) {
    const result = threadList(bus, { limit: 2, before });
    listed.push(...result.threads.map((t) => t.topic));
    if (!result.has_more) break;
    before = result.next_cursor!;
  }
  assert.deepEqual(listed, [...names].reverse());
  // A plain ISO date still works: everything created strictly before it.
  assert.equal(threadList(bus, { before: "2027-01-15T08:00:00.123+00:00" }).threads.length, 0);
  assert.equal(threadList(bus, { before: "2027-01-15T08:00:00.124+00:00" }).threads.length, 7);
});
