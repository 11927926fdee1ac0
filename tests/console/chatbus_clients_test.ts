/**
 * What AgentChatBus's own clients send, exactly as they send it (its VS Code
 * extension's `src/api/client.ts` and chat panel, its web UI's
 * `shared-threads.js`, `shared-chat.js` and `shared-sse.js`, read for this):
 * booleans spelled `1`, every thread on one page, images pasted into the
 * chat panel, and the event names its views listen for.
 */

import assert from "node:assert/strict";
import { connectInProcess } from "../_helpers/in_process.ts";
import { openEvents } from "../_helpers/sse.ts";
import { call, restServer } from "../_helpers/rest.ts";

type Json = Record<string, unknown>;

/** An agent registered as the extension registers its UI agent. */
async function uiAgent(url: string) {
  const ui = await call(`${url}/api/agents/register`, "POST", {
    name: "vscode-ui-human",
    display_name: "VSCode User",
    ide: "vscode",
    model: "human",
  });
  assert.equal(ui.status, 200);
  return ui.body as { agent_id: string; token: string };
}

async function createThread(
  url: string,
  agent: { agent_id: string; token: string },
  topic: string,
) {
  const created = await call(`${url}/api/threads`, "POST", {
    topic,
    creator_agent_id: agent.agent_id,
    system_prompt: `Prompt of ${topic}`,
  }, { "X-Agent-Token": agent.token });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.id as string;
}

Deno.test("the web UI's booleans: include_archived=1 lists archived threads, include_system_prompt=1 and =0", async () => {
  await using s = await restServer();
  const agent = await uiAgent(s.url);
  const kept = await createThread(s.url, agent, "kept");
  const archived = await createThread(s.url, agent, "archived");
  assert.equal((await call(`${s.url}/api/threads/${archived}/archive`, "POST", {})).status, 200);

  // shared-threads.js: the thread list.
  const all = await call(`${s.url}/api/threads?include_archived=1`);
  assert.equal(all.status, 200, JSON.stringify(all.body));
  assert.deepEqual(all.body.threads.map((t: Json) => t.id).sort(), [archived, kept].sort());
  const open = await call(`${s.url}/api/threads?include_archived=0`);
  assert.deepEqual(open.body.threads.map((t: Json) => t.id), [kept]);
  // The extension spells it true/false.
  const extension = await call(`${s.url}/api/threads?include_archived=true`);
  assert.equal(extension.body.threads.length, 2);

  // shared-chat.js: a thread's transcript with its system prompt.
  const withPrompt = await call(
    `${s.url}/api/threads/${kept}/transcript?after_seq=0&limit=400&include_system_prompt=1`,
  );
  assert.equal(withPrompt.status, 200, JSON.stringify(withPrompt.body));
  assert.ok(
    withPrompt.body.some((m: Json) => String(m.content).includes("Prompt of kept")),
    JSON.stringify(withPrompt.body),
  );
  const without = await call(
    `${s.url}/api/threads/${kept}/transcript?after_seq=0&limit=400&include_system_prompt=0`,
  );
  assert.equal(without.status, 200);
  assert.deepEqual(without.body, []);
  // Anything else is still refused, naming the parameter.
  const wrong = await call(`${s.url}/api/threads?include_archived=yes`);
  assert.equal(wrong.status, 400);
  assert.match(wrong.body.detail, /include_archived/);
});

Deno.test("GET /api/threads with no parameters lists every thread, as AgentChatBus does", async () => {
  await using s = await restServer();
  const agent = await uiAgent(s.url);
  const ids = new Set<string>();
  // Long topics and prompts: the tool result budget would have cut this list at about 30.
  for (let n = 0; n < 121; n++) {
    ids.add(await createThread(s.url, agent, `thread ${n} ${"x".repeat(150)}`));
  }
  // The extension's request (getThreads).
  const listed = await call(`${s.url}/api/threads?include_archived=false`);
  assert.equal(listed.status, 200);
  assert.equal(listed.body.threads.length, 121);
  assert.equal(listed.body.total, 121);
  assert.equal(listed.body.has_more, false);
  assert.equal(listed.body.next_cursor, null);
  assert.deepEqual(new Set(listed.body.threads.map((t: Json) => t.id)), ids);
  assert.equal((await call(`${s.url}/api/threads`)).body.threads.length, 121);
  // A limit still pages.
  const page = await call(`${s.url}/api/threads?limit=50`);
  assert.equal(page.body.threads.length, 50);
  assert.equal(page.body.has_more, true);
});

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (char) => char.charCodeAt(0),
);

Deno.test("an image pasted into the chat panel is kept with the post and shown from an inert URL", async () => {
  await using s = await restServer();
  const agent = await uiAgent(s.url);
  const threadId = await createThread(s.url, agent, "images");
  // The chat panel uploads the paste, then posts {content, images: [{url, name}], author}.
  const form = new FormData();
  form.set("file", new File([PNG as Uint8Array<ArrayBuffer>], "paste.png", { type: "image/png" }));
  const uploaded = await (await fetch(`${s.url}/api/upload/image`, { method: "POST", body: form }))
    .json();
  const sync = (await call(`${s.url}/api/threads/${threadId}/sync-context`, "POST", {})).body;
  const posted = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    author: "human",
    content: "see the screenshot",
    images: [{ url: uploaded.url, name: uploaded.name }],
    expected_last_seq: sync.current_seq,
    reply_token: sync.reply_token,
  });
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  const shown = posted.body.metadata.images as { url: string; name: string }[];
  assert.deepEqual(shown, [{
    url: `/api/messages/${posted.body.id}/attachments/0`,
    name: "paste.png",
  }]);
  // The chat panel reads the thread's messages and draws metadata.images[].url.
  const messages = await call(`${s.url}/api/threads/${threadId}/messages?after_seq=0`);
  assert.deepEqual(messages.body[0].metadata.images, shown);
  const image = await fetch(`${s.url}${shown[0]!.url}`);
  assert.equal(image.status, 200);
  assert.equal(image.headers.get("content-type"), "image/png");
  assert.equal(image.headers.get("content-security-policy"), "default-src 'none'; sandbox");
  assert.deepEqual(new Uint8Array(await image.arrayBuffer()), PNG);
  // An MCP agent gets it as an image block.
  await using mcp = await connectInProcess(s.dbPath, "chatbus");
  const got = await mcp.call("msg_list", { thread_id: threadId });
  assert.ok(
    (got.content as Json[]).some((block) =>
      block.type === "image" && block.mimeType === "image/png"
    ),
    JSON.stringify(got.content).slice(0, 400),
  );
  // The same rules as msg_post: five images are one too many, a broken one is refused.
  const five = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    content: "too many",
    images: Array.from({ length: 5 }, () => ({ url: uploaded.url, name: "x.png" })),
  });
  assert.equal(five.status, 400);
  const broken = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    content: "broken",
    images: [{ url: "data:image/png;base64,@@@@", name: "x.png" }],
  });
  assert.equal(broken.status, 400);
  assert.match(broken.body.detail, /not valid base64/);
});

/** AgentChatBus's stream: `data:` frames of `{type, payload}`, read with the SSE helper. */
async function chatbusEvents(url: string) {
  const stream = await openEvents(`${url}/events`);
  return {
    /** The payload of the next event of `type` that `accept` takes (within 10 s). */
    async until(type: string, accept: (payload: Json) => boolean = () => true): Promise<Json> {
      const event = await stream.next((e) => {
        const frame = e.data as { type: string; payload: Json };
        return frame.type === type && accept(frame.payload);
      }, 10_000);
      return (event.data as { payload: Json }).payload;
    },
    close: () => stream.close(),
  };
}

Deno.test("GET /events names each change as AgentChatBus's TS server does, with its payloads", async () => {
  await using s = await restServer();
  await using mcp = await connectInProcess(s.dbPath, "chatbus");
  const events = await chatbusEvents(s.url);
  try {
    await events.until("connected");
    const agent = await uiAgent(s.url);
    const online = await events.until("agent.online");
    assert.equal(online.id, agent.agent_id);
    assert.equal(online.display_name, "VSCode User");
    assert.equal((await call(`${s.url}/api/agents/heartbeat`, "POST", agent)).status, 200);
    assert.equal(
      (await events.until("agent.updated", (p) => p.id === agent.agent_id)).is_online,
      true,
    );

    const threadId = await createThread(s.url, agent, "live");
    const created = await events.until("thread.created");
    assert.deepEqual([created.id, created.topic, created.status], [threadId, "live", "discuss"]);

    await call(`${s.url}/api/threads/${threadId}/state`, "POST", { state: "implement" });
    const state = await events.until("thread.state");
    assert.deepEqual([state.id, state.status], [threadId, "implement"]);

    // An MCP agent joins and types.
    const bob = await mcp.ok("bus_connect", { thread_name: "live", ide: "B", model: "m" });
    const bobId = (bob.agent as { agent_id: string }).agent_id;
    await events.until("agent.online", (p) => p.id === bobId);
    await mcp.ok("agent_set_typing", {
      thread_id: threadId,
      agent_id: bobId,
      is_typing: true,
    });
    const typing = await events.until("agent.typing");
    assert.equal(typing.thread_id, threadId);
    assert.equal(typing.is_typing, true);
    assert.equal(typeof typing.agent_id, "string");

    const posted = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
      author: agent.agent_id,
      content: "first draft",
    });
    assert.equal((await events.until("msg.new")).id, posted.body.id);

    await call(`${s.url}/api/messages/${posted.body.id}`, "PUT", {
      new_content: "second draft",
      edited_by: agent.agent_id,
    });
    const edited = await events.until("msg.edit");
    assert.deepEqual([edited.id, edited.content, edited.edit_version], [
      posted.body.id,
      "second draft",
      1,
    ]);
    await call(`${s.url}/api/messages/${posted.body.id}/reactions`, "POST", {
      agent_id: agent.agent_id,
      reaction: "+1",
    });
    const reacted = await events.until("msg.react");
    assert.equal(reacted.id, posted.body.id);
    assert.deepEqual((reacted.reactions as Json[]).map((r) => r.reaction), ["+1"]);
    await fetch(
      `${s.url}/api/messages/${posted.body.id}/reactions/%2B1?agent_id=${agent.agent_id}`,
      { method: "DELETE" },
    ).then((r) => r.body?.cancel());
    assert.deepEqual((await events.until("msg.unreact")).reactions, []);

    await call(`${s.url}/api/threads/${threadId}/close`, "POST", { summary: "done here" });
    assert.deepEqual(await events.until("thread.closed"), {
      thread_id: threadId,
      summary: "done here",
    });

    await call(`${s.url}/api/agents/unregister`, "POST", agent);
    const gone = await events.until("agent.updated", (p) => p.id === agent.agent_id);
    assert.equal(gone.is_online, false);

    await fetch(`${s.url}/api/threads/${threadId}`, { method: "DELETE" }).then((r) =>
      r.body?.cancel()
    );
    assert.deepEqual(await events.until("thread.deleted"), { thread_id: threadId });
  } finally {
    await events.close();
  }
});
