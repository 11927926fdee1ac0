/**
 * Lists that one result cannot hold say so and lead on: 1,000 topics,
 * agents and templates, listed to the end through each dialect's tools
 * (`topic_list` of the peer profile; `thread_list`, `agent_list` and
 * `template_list` of the chatbus one) by following `next_cursor`, each item
 * once, in the list's order.
 */

import assert from "node:assert/strict";
import { connectInProcess, type InProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

type Json = Record<string, unknown>;

/** Every page of `tool`, following next_cursor (cursor named `cursorArg`) to the end. */
async function allPages(
  caller: InProcess,
  tool: string,
  key: string,
  args: Json = {},
  cursorArg = "cursor",
): Promise<{ items: Json[]; pages: number }> {
  const items: Json[] = [];
  let pages = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await caller.ok(
      tool,
      cursor === undefined ? args : { ...args, [cursorArg]: cursor },
    );
    pages++;
    assert.ok(pages < 500, `${tool} never ended`);
    items.push(...(page[key] as Json[]));
    const next = page.next_cursor as string | null | undefined;
    if (!next) {
      assert.ok(!page.has_more, `${tool}: has_more without next_cursor`);
      break;
    }
    assert.equal(page.has_more, true);
    if (cursorArg === "cursor") {
      // (The warning tells a model how to go on; thread_list has its own words for it.)
      const warning = (page.warnings as { message: string }[] | undefined)?.[0]?.message ?? "";
      assert.ok(warning.includes(`cursor="${next}"`), warning);
    }
    cursor = next;
  }
  return { items, pages };
}

Deno.test("1,000 topics, agents and templates are listed to the end, page by page, in order", async () => {
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/bus.sqlite`;
  await using peer = await connectInProcess(dbPath, "peer");
  await using chat = await connectInProcess(dbPath, "chatbus");
  const topicIds: string[] = [];
  const agentIds: string[] = [];
  const templateIds: string[] = [];
  for (let i = 0; i < 1000; i++) {
    topicIds.push((await peer.ok("topic_create", { name: `topic ${i}` })).topic_id as string);
    agentIds.push(
      (await chat.ok("agent_register", { ide: "I", model: `m${i}` })).agent_id as string,
    );
    templateIds.push(
      (await chat.ok("template_create", { id: `tpl-${i}`, name: `Template ${i}` })).id as string,
    );
  }

  // v6.3: newest first.
  const topics = await allPages(peer, "topic_list", "topics", { status: "all", limit: 1000 });
  assert.ok(topics.pages > 1, "one result cannot hold 1,000 topics");
  assert.deepEqual(topics.items.map((t) => t.topic_id), [...topicIds].reverse());
  // The chatbus dialect sees the same topics as threads.
  const threads = await allPages(chat, "thread_list", "threads", {}, "before");
  assert.deepEqual(new Set(threads.items.map((t) => t.thread_id)), new Set(topicIds));
  assert.equal(threads.items.length, 1000);
  // Agents in the order they registered; templates: the built-ins, then in the order made.
  const agents = await allPages(chat, "agent_list", "agents");
  assert.ok(agents.pages > 1);
  // (Agents registered in the same instant are in id order.)
  assert.equal(agents.items.length, 1000);
  assert.deepEqual(new Set(agents.items.map((a) => a.agent_id)), new Set(agentIds));
  const registered = agents.items.map((a) => String(a.registered_at));
  assert.deepEqual(registered, [...registered].sort());
  const templates = await allPages(chat, "template_list", "templates");
  assert.ok(templates.pages > 1);
  const ids = templates.items.map((t) => t.id as string);
  assert.deepEqual(ids.slice(0, 4), [
    "code-review",
    "security-audit",
    "architecture",
    "brainstorm",
  ]);
  assert.equal(ids.length, 1004);
  assert.deepEqual(new Set(ids.slice(4)), new Set(templateIds));
  const made = templates.items.slice(4).map((t) => String(t.created_at));
  assert.deepEqual(made, [...made].sort(), "(made in the same instant: in id order)");
  // A cursor that is not one is a bad argument, not an empty page.
  assert.equal((await peer.fail("topic_list", { cursor: "nonsense" })).code, "INVALID_ARGUMENT");
  assert.match(
    (await chat.fail("agent_list", { cursor: "x~" })).message,
    /next_cursor of an earlier agent_list call/,
  );
});
