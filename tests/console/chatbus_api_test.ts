/**
 * AgentChatBus's REST API on agent-bus (`lib/console/chatbus/`), in
 * process: the requests its VS Code extension makes (taken from the
 * extension's API client: the health and metrics probes, registering its UI
 * agent, creating a thread with `X-Agent-Token`, listing threads, fetching a
 * sync context, posting, reading), the agents' lifecycle, templates, and the
 * errors in its shapes; and an MCP agent on the same database sees what REST
 * wrote and the other way round.
 */

import assert from "node:assert/strict";
import { connectInProcess, serveHttpInProcess } from "../_helpers/in_process.ts";
import { textOf, type ToolCaller, until } from "../_helpers/peer.ts";
import { call, restServer } from "../_helpers/rest.ts";
import { tmpDir } from "../_helpers/tmp.ts";

type Json = Record<string, unknown>;

/** A registered agent and a thread it created, through the MCP tools. */
async function agentInThread(mcp: ToolCaller, topic: string) {
  const agent = await mcp.ok("agent_register", { ide: "A", model: "m" });
  const thread = await mcp.ok("thread_create", {
    topic,
    agent_id: agent.agent_id,
    token: agent.token,
  });
  return { agent, thread };
}

Deno.test("the VS Code extension's requests: probe, register, create a thread, list, sync, post, read", async () => {
  await using s = await restServer();
  const health = await call(`${s.url}/health`);
  assert.equal(health.status, 200);
  assert.equal(health.body.status, "ok");
  assert.equal(health.body.service, "AgentChatBus");
  assert.equal((await call(`${s.url}/api/metrics`)).status, 200);

  // Its UI agent registers with a name field AgentChatBus ignores too.
  const ui = await call(`${s.url}/api/agents/register`, "POST", {
    name: "vscode-ui-human",
    display_name: "VSCode User",
    ide: "vscode",
    model: "human",
  });
  assert.equal(ui.status, 200);
  assert.equal(ui.body.ok, true);
  assert.equal(ui.body.id, ui.body.agent_id);
  assert.equal(typeof ui.body.token, "string");

  const refused = await call(`${s.url}/api/threads`, "POST", {
    topic: "release",
    creator_agent_id: ui.body.agent_id,
  });
  assert.equal(refused.status, 401);
  assert.match(refused.body.detail, /X-Agent-Token/);
  const created = await call(`${s.url}/api/threads`, "POST", {
    topic: "release",
    creator_agent_id: ui.body.agent_id,
  }, { "X-Agent-Token": ui.body.token });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.topic, "release");
  assert.equal(created.body.status, "discuss");
  assert.equal(created.body.current_seq, 0);
  const threadId = created.body.id as string;

  const listed = await call(`${s.url}/api/threads?include_archived=false`);
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.threads.map((t: Json) => t.id), [threadId]);
  assert.deepEqual(listed.body.threads[0].waiting_agents, []);

  const sync = await call(`${s.url}/api/threads/${threadId}/sync-context`, "POST", {});
  assert.equal(sync.status, 200);
  assert.equal(sync.body.current_seq, 0);
  const posted = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    author: ui.body.agent_id,
    role: "user",
    content: "Ship it?",
    expected_last_seq: sync.body.current_seq,
    reply_token: sync.body.reply_token,
  });
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  assert.equal(posted.body.seq, 1);
  assert.equal(posted.body.content, "Ship it?");
  assert.equal(posted.body.id, posted.body.msg_id);
  // The same token again is a replay.
  const replayed = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    author: ui.body.agent_id,
    content: "again",
    expected_last_seq: 1,
    reply_token: sync.body.reply_token,
  });
  assert.equal(replayed.status, 400);
  assert.equal(replayed.body.error.code, "ReplyTokenReplayError");
  // Without sync fields a person can always post.
  const human = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    content: "From a script",
  });
  assert.equal(human.status, 201, JSON.stringify(human.body));
  assert.equal(human.body.author, "human");
  assert.equal(human.body.seq, 2);

  const messages = await call(`${s.url}/api/threads/${threadId}/messages?after_seq=0`);
  assert.equal(messages.status, 200);
  assert.deepEqual(messages.body.map((m: Json) => [m.seq, m.content]), [
    [1, "Ship it?"],
    [2, "From a script"],
  ]);
  const after = await call(`${s.url}/api/threads/${threadId}/messages?after_seq=1`);
  assert.deepEqual(after.body.map((m: Json) => m.seq), [2]);
  const missing = await call(`${s.url}/api/threads/nope/messages`);
  assert.equal(missing.status, 404);
  assert.equal(typeof missing.body.detail, "string");
});

Deno.test("agents over REST: register, heartbeat, resume, list, get, unregister; wrong credentials are 401", async () => {
  await using s = await restServer();
  const agent = (await call(`${s.url}/api/agents/register`, "POST", { ide: "Codex" })).body;
  assert.equal(agent.ide, "Codex");
  assert.equal(agent.model, "unknown");
  const creds = { agent_id: agent.agent_id, token: agent.token };
  assert.deepEqual((await call(`${s.url}/api/agents/heartbeat`, "POST", creds)).body, { ok: true });
  const resumed = await call(`${s.url}/api/agents/resume`, "POST", creds);
  assert.equal(resumed.body.ok, true);
  assert.equal(resumed.body.is_online, true);
  const all = await call(`${s.url}/api/agents`);
  assert.deepEqual(all.body.map((a: Json) => a.id), [agent.agent_id]);
  assert.equal(all.body[0].token, undefined, "never a token in a listing");
  assert.equal((await call(`${s.url}/api/agents/${agent.agent_id}`)).body.name, agent.name);
  assert.equal((await call(`${s.url}/api/agents/nobody`)).status, 404);
  for (const path of ["heartbeat", "resume", "unregister"]) {
    const wrong = await call(`${s.url}/api/agents/${path}`, "POST", { ...creds, token: "wrong" });
    assert.equal(wrong.status, 401, path);
    assert.equal(wrong.body.detail, "Invalid agent_id/token");
  }
  const bad = await call(`${s.url}/api/agents/heartbeat`, "POST", { agent_id: agent.agent_id });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "INVALID_ARGUMENT");
  assert.deepEqual((await call(`${s.url}/api/agents/unregister`, "POST", creds)).body, {
    ok: true,
  });
  assert.deepEqual((await call(`${s.url}/api/agents`)).body, []);
});

Deno.test("a thread created from a template over REST, and one bus with the MCP tools", async () => {
  await using s = await restServer();
  const templates = await call(`${s.url}/api/templates`);
  assert.ok(templates.body.some((t: Json) => t.id === "code-review" && t.is_builtin === true));
  const review = await call(`${s.url}/api/templates/code-review`);
  assert.equal(typeof review.body.system_prompt, "string");
  assert.equal((await call(`${s.url}/api/templates/nope`)).status, 404);

  const agent = (await call(`${s.url}/api/agents/register`, "POST", { ide: "A", model: "m" })).body;
  const created = await call(`${s.url}/api/threads`, "POST", {
    topic: "review #42",
    creator_agent_id: agent.agent_id,
    template: "code-review",
  }, { "X-Agent-Token": agent.token });
  assert.equal(created.status, 201);
  assert.equal(created.body.template_id, "code-review");
  assert.equal(created.body.system_prompt, review.body.system_prompt);
  const threadId = created.body.id as string;

  await using mcp = await connectInProcess(s.dbPath, "chatbus");
  await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    content: "Done reviewing",
    metadata: { stop_reason: "convergence" },
  });
  const listed = await mcp.call("msg_list", {
    thread_id: threadId,
    return_format: "json",
    include_system_prompt: false,
  });
  const text = (listed.content as { text: string }[])[0]!.text;
  assert.deepEqual(JSON.parse(text).map((m: Json) => m.content), ["Done reviewing"]);

  const metrics = (await call(`${s.url}/api/metrics`)).body;
  assert.equal(metrics.threads.total, 1);
  assert.deepEqual(metrics.threads.by_status, { discuss: 1 });
  assert.equal(metrics.messages.total, 1);
  assert.equal(metrics.messages.rate.last_1m, 1);
  assert.equal(metrics.messages.stop_reasons.convergence, 1);
  assert.equal(metrics.agents.total, 1);
  assert.equal(metrics.agents.online, 1);
});

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (char) => char.charCodeAt(0),
);

async function upload(url: string, bytes: Uint8Array, name: string, type: string) {
  const form = new FormData();
  form.set("file", new File([bytes as Uint8Array<ArrayBuffer>], name, { type }));
  const response = await fetch(`${url}/api/upload/image`, { method: "POST", body: form });
  return { status: response.status, body: await response.json() };
}

Deno.test("uploads: raster images by their bytes and named as such, bounded; SVG, PHP and executables refused", async () => {
  await using s = await restServer();
  const png = await upload(s.url, PNG, "../../shot.png", "image/png");
  assert.equal(png.status, 200, JSON.stringify(png.body));
  assert.equal(png.body.url, `data:image/png;base64,${btoa(String.fromCharCode(...PNG))}`);
  assert.equal(png.body.name, "shot.png");
  // The bytes decide, not the declared type; a name must not say another type.
  const declared = await upload(s.url, PNG, "x.PNG", "image/svg+xml");
  assert.equal(declared.body.mime_type, "image/png");
  assert.equal((await upload(s.url, PNG, "clipboard", "image/png")).status, 200);
  for (const name of ["x.svg", "shell.php", "photo.jpg", "x.png.exe"]) {
    const misnamed = await upload(s.url, PNG, name, "image/png");
    assert.equal(misnamed.status, 400, name);
    assert.match(misnamed.body.detail, /does not match its content \(image\/png\)/);
  }
  const text = (content: string) => new TextEncoder().encode(content);
  for (
    const [bytes, name, type] of [
      [
        text('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
        "a.svg",
        "image/svg+xml",
      ],
      [text("<?php system($_GET['c']); ?>"), "shell.php", "image/png"],
      [Uint8Array.of(0x4d, 0x5a, 0x90, 0x00), "tool.exe", "application/octet-stream"],
    ] as const
  ) {
    const refused = await upload(s.url, bytes, name, type);
    assert.equal(refused.status, 400, name);
    assert.equal(refused.body.error.code, "INVALID_ARGUMENT");
    assert.match(refused.body.detail, /^Unsupported image type/);
  }
  const notMultipart = await call(`${s.url}/api/upload/image`, "POST", { file: "x" });
  assert.equal(notMultipart.status, 415);
  const empty = await fetch(`${s.url}/api/upload/image`, { method: "POST", body: new FormData() });
  assert.equal(empty.status, 400);
  await empty.body?.cancel();
});

Deno.test("an upload larger than the attachment limit is refused, reading no more than that", async () => {
  await using dir = await tmpDir();
  const server = serveHttpInProcess(`${dir.path}/bus.sqlite`, {
    AGENT_BUS_MAX_ATTACHMENT_BYTES: "1024",
  });
  try {
    const big = new Uint8Array(64 << 10);
    big.set(PNG);
    const refused = await upload(server.url, big, "big.png", "image/png");
    assert.equal(refused.status, 413);
    assert.equal(refused.body.error.code, "PAYLOAD_TOO_LARGE");
    assert.equal((await upload(server.url, PNG, "small.png", "image/png")).status, 200);
  } finally {
    await server[Symbol.asyncDispose]();
  }
});

Deno.test("a thread's agents over REST, and deleting a thread", async () => {
  await using s = await restServer();
  const register = async (ide: string) =>
    (await call(`${s.url}/api/agents/register`, "POST", { ide, model: "m" })).body;
  const creator = await register("Creator");
  const poster = await register("Poster");
  await register("Bystander");
  const threadId = (await call(`${s.url}/api/threads`, "POST", {
    topic: "who is here",
    creator_agent_id: creator.agent_id,
  }, { "X-Agent-Token": creator.token })).body.id;
  const posted = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
    author: poster.agent_id,
    content: "hello",
  });
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  const agents = await call(`${s.url}/api/threads/${threadId}/agents`);
  assert.deepEqual(
    agents.body.map((a: Json) => a.id).sort(),
    [creator.agent_id, poster.agent_id].sort(),
  );

  const deleted = await call(`${s.url}/api/threads/${threadId}`, "DELETE");
  assert.deepEqual(deleted.body, { ok: true, deleted: threadId });
  assert.equal((await call(`${s.url}/api/threads/${threadId}/messages`)).status, 404);
  assert.equal((await call(`${s.url}/api/threads/${threadId}`, "DELETE")).status, 404);
  assert.equal((await call(`${s.url}/api/threads/${threadId}/agents`)).status, 404);
});

Deno.test("thread settings: the tools and REST say there is no coordinator, and refuse to start one", async () => {
  await using s = await restServer();
  await using mcp = await connectInProcess(s.dbPath, "chatbus");
  const { agent, thread } = await agentInThread(mcp, "settings");
  const viaTool = await mcp.ok("thread_settings_get", { thread_id: thread.thread_id });
  assert.equal(viaTool.auto_administrator_enabled, false);
  assert.equal(viaTool.creator_admin_id, agent.agent_id);
  const viaRest = await call(`${s.url}/api/threads/${thread.thread_id}/settings`);
  assert.deepEqual(viaRest.body, viaTool);

  const off = await mcp.ok("thread_settings_update", {
    thread_id: thread.thread_id,
    auto_administrator_enabled: false,
  });
  assert.equal(off.ok, true);
  const refused = await mcp.fail("thread_settings_update", {
    thread_id: thread.thread_id,
    auto_administrator_enabled: true,
    timeout_seconds: 60,
  });
  assert.equal(refused.code, "INVALID_ARGUMENT");
  assert.match(
    refused.message,
    /no admin coordinator.*auto_administrator_enabled=true, timeout_seconds/,
  );
  const restRefused = await call(`${s.url}/api/threads/${thread.thread_id}/settings`, "POST", {
    switch_timeout_seconds: 45,
  });
  assert.equal(restRefused.status, 400);
  assert.match(restRefused.body.detail, /switch_timeout_seconds/);
  assert.equal((await call(`${s.url}/api/threads/nope/settings`)).status, 404);
});

Deno.test("GET /events speaks AgentChatBus's stream: connected, then msg.new and thread events", async () => {
  await using s = await restServer();
  const agent = (await call(`${s.url}/api/agents/register`, "POST", { ide: "A", model: "m" })).body;
  const response = await fetch(`${s.url}/events`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const frames = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  /** The next `data:` frame's event. */
  const next = async (): Promise<{ type: string; payload: Json }> => {
    for (;;) {
      const end = buffered.indexOf("\n\n");
      if (end >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = frame.split("\n").find((line) => line.startsWith("data: "));
        if (data !== undefined) return JSON.parse(data.slice(6));
        continue; // a comment
      }
      const { value, done } = await frames.read();
      if (done) throw new Error("the stream ended");
      buffered += value;
    }
  };
  try {
    assert.equal((await next()).type, "connected");
    const threadId = (await call(`${s.url}/api/threads`, "POST", {
      topic: "live",
      creator_agent_id: agent.agent_id,
    }, { "X-Agent-Token": agent.token })).body.id;
    await call(`${s.url}/api/threads/${threadId}/messages`, "POST", { content: "hello, stream" });
    const seen: string[] = [];
    let message: Json | undefined;
    while (message === undefined) {
      assert.ok(seen.length < 50, `no msg.new among ${seen.join(",")}`);
      const event = await next();
      seen.push(event.type);
      if (event.type === "msg.new") message = event.payload;
    }
    assert.ok(seen.includes("thread.created"), seen.join(","));
    assert.equal(message.thread_id, threadId);
    assert.equal(message.content, "hello, stream");
    assert.equal(message.seq, 1);
    // A reply is also announced as msg.reply.
    const replied = await call(`${s.url}/api/threads/${threadId}/messages`, "POST", {
      content: "and a reply",
      reply_to_msg_id: message.msg_id,
    });
    assert.equal(replied.status, 201, JSON.stringify(replied.body));
    for (let n = 0;; n++) {
      assert.ok(n < 50, "no msg.reply");
      const event = await next();
      if (event.type !== "msg.reply") continue;
      assert.deepEqual(
        [event.payload.reply_to_msg_id, event.payload.msg_id],
        [message.msg_id, replied.body.msg_id],
      );
      break;
    }
  } finally {
    await frames.cancel();
  }
});

Deno.test("kick: the agent's msg_wait ends at once, it shows offline until its next call; an unknown agent is 404", async () => {
  await using s = await restServer();
  await using mcp = await connectInProcess(s.dbPath, "chatbus");
  const { agent, thread } = await agentInThread(mcp, "kick");
  const started = performance.now();
  const waiting = mcp.call("msg_wait", {
    thread_id: thread.thread_id,
    after_seq: 0,
    agent_id: agent.agent_id,
    token: agent.token,
    timeout_ms: 60_000,
    return_format: "json",
  });
  await until(async () => {
    const threads = (await call(`${s.url}/api/threads`)).body.threads as Json[];
    return (threads[0]!.waiting_agents as Json[]).length === 1;
  }, { what: "the agent waiting in msg_wait" });

  const kicked = await call(`${s.url}/api/agents/${agent.agent_id}/kick`, "POST");
  assert.equal(kicked.status, 200, JSON.stringify(kicked.body));
  assert.equal(kicked.body.ok, true);
  assert.equal(kicked.body.agent_id, agent.agent_id);
  assert.deepEqual(kicked.body.threads_interrupted, [thread.thread_id]);
  assert.equal(kicked.body.sessions_disconnected_count, 0);
  const ended = await waiting;
  assert.ok(performance.now() - started < 30_000, "the wait ended long before its 60 s timeout");
  assert.equal(ended.isError, undefined);
  const answer = JSON.parse(textOf(ended));
  assert.deepEqual(answer.messages, []);
  assert.equal(answer.warnings[0].code, "AGENT_KICKED");

  const shown = (await call(`${s.url}/api/agents/${agent.agent_id}`)).body;
  assert.equal(shown.is_online, false);
  assert.equal(shown.last_activity, "kicked");
  assert.equal((await call(`${s.url}/api/metrics`)).body.agents.online, 0);
  const threads = (await call(`${s.url}/api/threads`)).body.threads as Json[];
  assert.deepEqual(threads[0]!.waiting_agents, []);

  // Its token still works; its next call brings it back.
  assert.equal(
    (await call(`${s.url}/api/agents/heartbeat`, "POST", {
      agent_id: agent.agent_id,
      token: agent.token,
    })).status,
    200,
  );
  assert.equal((await call(`${s.url}/api/agents/${agent.agent_id}`)).body.is_online, true);
  assert.equal((await call(`${s.url}/api/metrics`)).body.agents.online, 1);

  const missing = await call(`${s.url}/api/agents/nobody/kick`, "POST");
  assert.equal(missing.status, 404);
  assert.equal(missing.body.detail, "Agent not found");
});

Deno.test("server settings: shown read-only with the variable that sets each; PUT accepts what runs and refuses changes", async () => {
  await using s = await restServer();
  const port = Number(new URL(s.url).port);
  const settings = await call(`${s.url}/api/settings`);
  assert.equal(settings.status, 200);
  assert.equal(settings.body.PORT, port);
  assert.equal(settings.body.HOST, "127.0.0.1");
  assert.deepEqual(Object.keys(settings.body), Object.keys(settings.body).toSorted());

  const manifest = (await call(`${s.url}/api/settings/manifest`)).body;
  assert.equal(typeof manifest.schema_version, "string");
  const fields = (manifest.sections as { fields: Json[] }[]).flatMap((section) => section.fields);
  assert.deepEqual(fields.map((f) => f.key).toSorted(), Object.keys(settings.body));
  assert.ok(fields.every((f) => f.editable === false && typeof f.readonly_reason === "string"));
  const portField = fields.find((f) => f.key === "PORT")!;
  assert.equal(portField.value, port);
  assert.match(portField.readonly_reason as string, /AGENT_BUS_HTTP_PORT.*AGENTCHATBUS_PORT/);

  // AgentChatBus's settings dialog sends the fields it shows; as they are, that is fine.
  const same = await call(`${s.url}/api/settings`, "PUT", {
    ...settings.body,
    PORT: String(port),
    RATE_LIMIT_ENABLED: "false",
  });
  assert.equal(same.status, 200, JSON.stringify(same.body));
  assert.equal(same.body.ok, true);
  assert.equal((await call(`${s.url}/api/settings`, "PUT", {})).status, 200);

  const changed = await call(`${s.url}/api/settings`, "PUT", {
    PORT: port + 1,
    CONTENT_FILTER_ENABLED: true,
    DB: "/tmp/other.db",
  });
  assert.equal(changed.status, 400);
  assert.equal(changed.body.error.code, "INVALID_ARGUMENT");
  assert.equal(changed.body.errors.length, 3);
  assert.match(changed.body.errors[0], /^PORT: Set AGENT_BUS_HTTP_PORT/);
  assert.match(changed.body.errors[1], /^CONTENT_FILTER_ENABLED: agent-bus has no content filter/);
  assert.match(changed.body.errors[2], /^DB: agent-bus has no such setting/);
  assert.equal((await call(`${s.url}/api/settings`)).body.PORT, port);
  assert.equal((await call(`${s.url}/api/settings`, "PUT", ["PORT"])).status, 400);
});

Deno.test("GET /api/search answers AgentChatBus's callers too: thread_id, total, thread_topic, author", async () => {
  await using s = await restServer();
  const agent = (await call(`${s.url}/api/agents/register`, "POST", { ide: "A", model: "m" })).body;
  const threadIds: string[] = [];
  for (const topic of ["search one", "search two"]) {
    const created = await call(`${s.url}/api/threads`, "POST", {
      topic,
      creator_agent_id: agent.agent_id,
    }, { "X-Agent-Token": agent.token });
    threadIds.push(created.body.id);
    await call(`${s.url}/api/threads/${created.body.id}/messages`, "POST", {
      author: agent.agent_id,
      content: `the xkzqvfword appears in ${topic}`,
    });
  }
  const all = await call(`${s.url}/api/search?q=xkzqvfword&limit=50`);
  assert.equal(all.status, 200, JSON.stringify(all.body));
  assert.equal(all.body.query, "xkzqvfword");
  assert.equal(all.body.total, 2);
  assert.equal(all.body.count, 2);
  for (const hit of all.body.results as Json[]) {
    assert.equal(hit.thread_id, hit.topic_id);
    assert.equal(hit.thread_topic, hit.topic_name);
    assert.equal(hit.author, hit.sender);
    assert.equal(typeof hit.message_id, "string");
    assert.match(hit.snippet as string, /«xkzqvfword»/);
  }
  const scoped = await call(`${s.url}/api/search?q=xkzqvfword&thread_id=${threadIds[0]}`);
  assert.deepEqual(scoped.body.results.map((hit: Json) => hit.thread_id), [threadIds[0]]);
  assert.equal(scoped.body.results[0].thread_topic, "search one");
  assert.equal((await call(`${s.url}/api/search?q=`)).status, 400);
  // Its web UI inserts snippets as HTML: a message's markup arrives escaped.
  await call(`${s.url}/api/threads/${threadIds[0]}/messages`, "POST", {
    author: agent.agent_id,
    content: `<img src=x onerror="alert('xkzqvfhtml')"> & more`,
  });
  const html = await call(`${s.url}/api/search?q=xkzqvfhtml`);
  assert.equal(html.body.total, 1);
  assert.match(
    html.body.results[0].snippet,
    /&lt;img src=x onerror=&quot;alert\(&#39;«xkzqvfhtml»/,
  );
  assert.doesNotMatch(html.body.results[0].snippet, /[<>]/);
  const none = await call(`${s.url}/api/search?q=zxqvbnmunlikelyterm99999`);
  assert.deepEqual([none.body.results, none.body.total], [[], 0]);
});

Deno.test("a method a path does not take is 405 with the methods it takes in Allow", async () => {
  await using s = await restServer();
  const response = await fetch(`${s.url}/api/agents/someone`, { method: "DELETE" });
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "GET, PUT");
  assert.deepEqual((await response.json()).allowed, ["GET", "PUT"]);
});

Deno.test("GET /api/threads pages with next_cursor, even put into the URL unencoded", async () => {
  await using s = await restServer();
  const agent = (await call(`${s.url}/api/agents/register`, "POST", { ide: "A", model: "m" })).body;
  const created: string[] = [];
  for (const topic of ["one", "two", "three"]) {
    const thread = await call(`${s.url}/api/threads`, "POST", {
      topic,
      creator_agent_id: agent.agent_id,
    }, { "X-Agent-Token": agent.token });
    created.push(thread.body.id);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 5; page++) {
    // As AgentChatBus's clients do: the cursor ("…+00:00~n") as it is, so "+" reads as a space.
    const listed = await call(
      `${s.url}/api/threads?limit=2${cursor === null ? "" : `&before=${cursor}`}`,
    );
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    seen.push(...listed.body.threads.map((t: Json) => t.id));
    if (!listed.body.has_more) break;
    cursor = listed.body.next_cursor;
    assert.match(cursor!, /\+00:00~\d+$/);
  }
  assert.deepEqual(seen, created.toReversed());
});

Deno.test("creating a thread whose topic exists gets that thread, over REST and MCP, as in AgentChatBus; a rename cannot take a topic", async () => {
  await using s = await restServer();
  await using mcp = await connectInProcess(s.dbPath, "chatbus");
  const alice = await mcp.ok("agent_register", { ide: "A", model: "m" });
  const bob = await mcp.ok("agent_register", { ide: "B", model: "m" });
  const first = await mcp.ok("thread_create", {
    topic: "nightly",
    agent_id: alice.agent_id,
    token: alice.token,
  });
  await mcp.ok("msg_post", {
    thread_id: first.thread_id,
    author: alice.agent_id,
    content: "run 1",
    expected_last_seq: first.current_seq,
    reply_token: first.reply_token,
  });
  // Bob's script creates "nightly" again: the same thread, and a context to post in it at once.
  const again = await mcp.ok("thread_create", {
    topic: "nightly",
    agent_id: bob.agent_id,
    token: bob.token,
  });
  assert.equal(again.thread_id, first.thread_id);
  assert.equal(again.current_seq, 1);
  await mcp.ok("msg_post", {
    thread_id: again.thread_id,
    author: bob.agent_id,
    content: "run 2",
    expected_last_seq: again.current_seq,
    reply_token: again.reply_token,
  });
  const viaRest = await call(`${s.url}/api/threads`, "POST", {
    topic: "nightly",
    creator_agent_id: bob.agent_id,
  }, { "X-Agent-Token": bob.token });
  assert.equal(viaRest.status, 201);
  assert.equal(viaRest.body.id, first.thread_id);
  assert.equal(viaRest.body.creator_admin_id, alice.agent_id);
  const threads = (await call(`${s.url}/api/threads`)).body;
  assert.equal(threads.total, 1);
  // (So a rename may not take a topic another thread has.)
  const other = await call(`${s.url}/api/threads`, "POST", {
    topic: "nightly 2",
    creator_agent_id: bob.agent_id,
  }, { "X-Agent-Token": bob.token });
  assert.notEqual(other.body.id, first.thread_id);
  const taken = await call(`${s.url}/api/threads/${other.body.id}/rename`, "POST", {
    topic: "nightly",
  });
  assert.equal(taken.status, 409);
  assert.equal(taken.body.error.code, "THREAD_TOPIC_IN_USE");
  const renamed = await call(`${s.url}/api/threads/${other.body.id}/rename`, "POST", {
    topic: "  weekly ",
  });
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
  assert.deepEqual([renamed.body.ok, renamed.body.thread.topic], [true, "weekly"]);
  assert.equal((await call(`${s.url}/api/threads/${other.body.id}`)).body.topic, "weekly");
  const same = await call(`${s.url}/api/threads/${first.thread_id}/rename`, "POST", {
    topic: "nightly",
  });
  assert.equal(same.status, 200);
  assert.equal(
    (await call(`${s.url}/api/threads/nope/rename`, "POST", { topic: "x" })).status,
    404,
  );
  assert.equal(
    (await call(`${s.url}/api/threads/${first.thread_id}/rename`, "POST", {})).status,
    400,
  );
});

Deno.test("a thread's export names each message's author as people see it, in AgentChatBus's layout", async () => {
  await using s = await restServer();
  const alice = (await call(`${s.url}/api/agents/register`, "POST", {
    ide: "Claude Code",
    model: "opus",
    display_name: "Alice",
  })).body;
  const thread = (await call(`${s.url}/api/threads`, "POST", {
    topic: "Release 2.0: notes!",
    creator_agent_id: alice.agent_id,
  }, { "X-Agent-Token": alice.token })).body;
  for (const content of ["first", "second"]) {
    await call(`${s.url}/api/threads/${thread.id}/messages`, "POST", {
      author: alice.agent_id,
      content,
    });
  }
  const response = await fetch(`${s.url}/api/threads/${thread.id}/export`);
  assert.equal(
    response.headers.get("content-disposition"),
    'attachment; filename="release-2-0-notes.md"',
  );
  const text = await response.text();
  const blocks = text.split("\n---\n\n");
  assert.match(blocks[0]!, /^# Release 2\.0: notes!\n\n> \*\*Status:\*\* discuss \|/);
  assert.match(blocks[0]!, /\*\*Messages:\*\* 2 \|/);
  assert.deepEqual(
    blocks.slice(1).map((block) => block.replace(/ — [^\n]+/, "")),
    ["### Alice\n\nfirst\n", "### Alice\n\nsecond\n\n---\n"],
  );
  assert.equal((await fetch(`${s.url}/api/threads/nope/export`)).status, 404);
});
