/**
 * AgentChatBus's REST reference (`docs/reference/rest-api.md` in its
 * repository), replayed against agent-bus: each documented request, with
 * the body the reference shows, gets the status and the fields the
 * reference promises: every row of it but the admin coordinator's decision
 * (agent-bus has no admin coordinator) and the MCP transports (tested with
 * MCP clients in `tests/transports`).
 * In process, on a real database file.
 */

import assert from "node:assert/strict";
import { serveHttpInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

type Json = Record<string, unknown>;

Deno.test("AgentChatBus's documented REST examples get the documented answers", async () => {
  await using dir = await tmpDir();
  await using server = serveHttpInProcess(`${dir.path}/bus.sqlite`);
  const base = server.url;
  const send = async (method: string, path: string, body?: unknown, headers: Json = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(headers as Record<string, string>),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const type = response.headers.get("content-type") ?? "";
    return {
      status: response.status,
      headers: response.headers,
      body: type.includes("json") ? await response.json() : await response.text(),
    };
  };
  const expect = (
    row: string,
    got: { status: number; body: unknown },
    status: number,
    keys: string[] = [],
  ) => {
    assert.equal(got.status, status, `${row}: ${JSON.stringify(got.body).slice(0, 300)}`);
    for (const key of keys) assert.ok(key in (got.body as Json), `${row}: no "${key}"`);
  };

  // Health: `{ "status": "ok", "service": "AgentChatBus" }`.
  const health = await send("GET", "/health");
  expect("GET /health", health, 200, ["status", "service"]);
  assert.deepEqual([health.body.status, health.body.service], ["ok", "AgentChatBus"]);

  // Agents: register `{ide, model, description, capabilities, skills}`.
  const registered = await send("POST", "/api/agents/register", {
    ide: "Cursor",
    model: "claude",
    description: "reviews code",
    capabilities: ["review"],
    skills: [{ id: "ts", name: "TypeScript" }],
  });
  expect("POST /api/agents/register", registered, 200, ["agent_id", "token", "capabilities"]);
  const agent = registered.body as { agent_id: string; token: string };
  const creds = { agent_id: agent.agent_id, token: agent.token };
  expect("GET /api/agents", await send("GET", "/api/agents"), 200);
  expect("GET /api/agents/{id}", await send("GET", `/api/agents/${agent.agent_id}`), 200, [
    "capabilities",
    "skills",
  ]);
  expect("GET /api/agents/{id} (missing)", await send("GET", "/api/agents/nobody"), 404);
  expect("POST /api/agents/heartbeat", await send("POST", "/api/agents/heartbeat", creds), 200);
  expect("POST /api/agents/resume", await send("POST", "/api/agents/resume", creds), 200);
  // Update `{token, capabilities, skills, description, display_name}`; a wrong token is 401.
  const updated = await send("PUT", `/api/agents/${agent.agent_id}`, {
    token: agent.token,
    capabilities: ["review", "release"],
    description: "reviews and ships",
    display_name: "Reviewer",
  });
  expect("PUT /api/agents/{id}", updated, 200, ["capabilities"]);
  assert.deepEqual(
    [updated.body.display_name, updated.body.capabilities],
    ["Reviewer", ["review", "release"]],
  );
  assert.equal(
    (await send("PUT", `/api/agents/${agent.agent_id}`, { token: "wrong" })).status,
    401,
  );

  // Templates: list, get (404 if not found), create `{id, name, description, system_prompt}`.
  expect("GET /api/templates", await send("GET", "/api/templates"), 200);
  expect("GET /api/templates/{id}", await send("GET", "/api/templates/code-review"), 200, [
    "system_prompt",
  ]);
  expect("GET /api/templates/{id} (missing)", await send("GET", "/api/templates/none"), 404);
  const template = await send("POST", "/api/templates", {
    id: "release",
    name: "Release",
    description: "Ship it",
    system_prompt: "Check the changelog.",
  });
  expect("POST /api/templates", template, 201, ["id", "name", "description", "is_builtin"]);
  // Delete a custom template (403 for a built-in one, 404 when missing).
  await send("POST", "/api/templates", { id: "scratch", name: "Scratch" });
  const gone = await fetch(`${base}/api/templates/scratch`, { method: "DELETE" });
  assert.equal(gone.status, 204);
  await gone.body?.cancel();
  expect(
    "DELETE /api/templates/{id} (built in)",
    await send("DELETE", "/api/templates/code-review"),
    403,
  );
  expect(
    "DELETE /api/templates/{id} (missing)",
    await send("DELETE", "/api/templates/scratch"),
    404,
  );

  // Threads: create `{topic, metadata, system_prompt, template}` (the TS server also wants the
  // creator, whose token goes in X-Agent-Token).
  const created = await send("POST", "/api/threads", {
    topic: "Release 1.4",
    metadata: { ticket: "REL-14" },
    system_prompt: "Be brief.",
    template: "release",
    creator_agent_id: agent.agent_id,
  }, { "X-Agent-Token": agent.token });
  expect("POST /api/threads", created, 201, ["id", "topic", "current_seq", "reply_token"]);
  const id = (created.body as { id: string }).id;
  expect(
    "GET /api/threads?status=&include_archived=",
    await send("GET", "/api/threads?status=discuss&include_archived=true"),
    200,
    ["threads"],
  );

  // Messages: post `{author, role, content, metadata, mentions}`; list with the documented query.
  const posted = await send("POST", `/api/threads/${id}/messages`, {
    author: agent.agent_id,
    role: "assistant",
    content: "Changelog checked.",
    metadata: { stop_reason: "complete" },
    mentions: [agent.agent_id],
  });
  expect("POST /api/threads/{id}/messages", posted, 201, ["id", "seq", "author", "content"]);
  const listed = await send(
    "GET",
    `/api/threads/${id}/messages?after_seq=0&limit=200&include_system_prompt=false`,
  );
  expect("GET /api/threads/{id}/messages", listed, 200);
  assert.deepEqual((listed.body as Json[]).map((m) => m.content), ["Changelog checked."]);
  expect(
    "POST /api/threads/{id}/sync-context",
    await send("POST", `/api/threads/${id}/sync-context`),
    200,
    ["current_seq", "reply_token", "reply_window"],
  );

  // Settings `{auto_administrator_enabled, timeout_seconds}`, with the older alias.
  expect("GET /api/threads/{id}/settings", await send("GET", `/api/threads/${id}/settings`), 200, [
    "auto_administrator_enabled",
    "timeout_seconds",
  ]);
  expect(
    "POST /api/threads/{id}/settings (alias)",
    await send("POST", `/api/threads/${id}/settings`, { auto_coordinator_enabled: false }),
    200,
  );
  // Admin: the creator.
  const admin = await send("GET", `/api/threads/${id}/admin`);
  expect("GET /api/threads/{id}/admin", admin, 200, ["admin_id", "admin_type"]);
  assert.deepEqual([admin.body.admin_id, admin.body.admin_type], [agent.agent_id, "creator"]);
  expect("GET /api/threads/{id}/agents", await send("GET", `/api/threads/${id}/agents`), 200);

  // Transcript (`?after_seq&limit`), a message's reactions and edit history.
  const transcript = await send("GET", `/api/threads/${id}/transcript?after_seq=0&limit=400`);
  expect("GET /api/threads/{id}/transcript", transcript, 200);
  assert.equal((transcript.body as Json[]).length, 1);
  const msgId = (posted.body as { id: string }).id;
  // Reactions: add `{reaction, agent_id}` (idempotent), list, remove with `?agent_id=`.
  for (let i = 0; i < 2; i++) {
    const added = await send("POST", `/api/messages/${msgId}/reactions`, {
      reaction: "agree",
      agent_id: agent.agent_id,
    });
    expect("POST /api/messages/{id}/reactions", added, 201, ["reaction", "agent_id"]);
  }
  const reactions = await send("GET", `/api/messages/${msgId}/reactions`);
  expect("GET /api/messages/{id}/reactions", reactions, 200, ["reactions"]);
  assert.deepEqual(
    (reactions.body.reactions as Json[]).map((r) => [r.reaction, r.agent_id]),
    [["agree", agent.agent_id]],
  );
  const removed = await send(
    "DELETE",
    `/api/messages/${msgId}/reactions/agree?agent_id=${agent.agent_id}`,
  );
  expect("DELETE /api/messages/{id}/reactions/{reaction}", removed, 200, ["removed"]);
  assert.equal(removed.body.removed, true);
  // Edit `{content, edited_by}` (the author, or system); the old text goes to the history.
  const edited = await send("PUT", `/api/messages/${msgId}`, {
    content: "Changelog checked twice.",
    edited_by: agent.agent_id,
  });
  expect("PUT /api/messages/{id}", edited, 200, ["msg_id", "version", "edited_at", "edited_by"]);
  const refusedEdit = await send("PUT", `/api/messages/${msgId}`, {
    content: "hijacked",
    edited_by: "someone-else",
  });
  assert.equal(refusedEdit.status, 403, JSON.stringify(refusedEdit.body));
  const unchanged = await send("PUT", `/api/messages/${msgId}`, {
    content: "Changelog checked twice.",
    edited_by: agent.agent_id,
  });
  assert.equal(unchanged.body.no_change, true);
  expect(
    "GET /api/messages/{id}/history",
    await send("GET", `/api/messages/${msgId}/history`),
    200,
    [
      "edits",
    ],
  );
  expect(
    "GET /api/messages/{id}/history (missing)",
    await send("GET", "/api/messages/x/history"),
    404,
  );
  // Settings: `{ "HOST": "...", "PORT": ..., ... }`.
  const settings = await send("GET", "/api/settings");
  expect("GET /api/settings", settings, 200, ["HOST", "PORT"]);
  assert.equal(settings.body.PORT, Number(new URL(base).port));
  // PUT `{HOST, PORT, …}`: "requires restart". Here the settings come from the environment:
  // the ones that run are accepted, a change is refused saying which variable sets it.
  expect("PUT /api/settings (as it is)", await send("PUT", "/api/settings", settings.body), 200, [
    "ok",
  ]);
  const moved = await send("PUT", "/api/settings", { PORT: 39765 });
  expect("PUT /api/settings (a change)", moved, 400, ["detail", "errors"]);
  assert.match(moved.body.detail, /AGENT_BUS_HTTP_PORT/);

  // Search: `?q=...`, optional `thread_id` and `limit`.
  const found = await send("GET", `/api/search?q=changelog&thread_id=${id}&limit=50`);
  expect("GET /api/search", found, 200, ["results", "total", "query"]);
  assert.equal(found.body.total, 1);
  assert.equal(found.body.results[0].thread_id, id);
  expect("GET /api/search (no q)", await send("GET", "/api/search"), 400);

  // Export: a Markdown download.
  const exported = await send("GET", `/api/threads/${id}/export`);
  assert.equal(exported.status, 200);
  assert.match(exported.headers.get("content-disposition") ?? "", /^attachment/);
  assert.match(exported.body as string, /Changelog checked twice\./);
  // Its layout: title, status and dates quoted, a rule, each message under "### author — date".
  assert.match(
    exported.body as string,
    /^# .+\n\n> \*\*Status:\*\* discuss \| \*\*Created:\*\* \d{4}-\d\d-\d\d \d\d:\d\d UTC\n> \*\*Messages:\*\* \d+ \| \*\*Exported:\*\* .+ UTC\n\n---\n\n### .+ — \d{4}-\d\d-\d\d \d\d:\d\d UTC\n/,
  );
  assert.match(exported.headers.get("content-disposition") ?? "", /filename="[\w-]+\.md"$/);

  // State `{state: discuss|implement|review|done}`, close `{summary}`, archive, unarchive.
  for (const state of ["implement", "review", "done", "discuss"]) {
    const changed = await send("POST", `/api/threads/${id}/state`, { state });
    expect(`POST /api/threads/{id}/state ${state}`, changed, 200);
    assert.equal(changed.body.status, state);
  }
  expect(
    "POST /api/threads/{id}/close",
    await send("POST", `/api/threads/${id}/close`, {
      summary: "Shipped",
    }),
    200,
  );
  expect("POST /api/threads/{id}/archive", await send("POST", `/api/threads/${id}/archive`), 200);
  const unarchived = await send("POST", `/api/threads/${id}/unarchive`);
  expect("POST /api/threads/{id}/unarchive", unarchived, 200);
  assert.equal(unarchived.body.status, "discuss");

  // Metrics: thread counts, message rates, latency, stop reasons, agents.
  const metrics = await send("GET", "/api/metrics");
  expect("GET /api/metrics", metrics, 200, ["threads", "messages", "agents"]);
  assert.equal(metrics.body.messages.stop_reasons.complete, 1);

  // MCP: `POST /mcp/messages`, one JSON-RPC request answered as `{result}`.
  const rpc = await send("POST", "/mcp/messages", { id: 1, method: "tools/list" });
  expect("POST /mcp/messages", rpc, 200, ["result"]);
  assert.ok(rpc.body.result.tools.length > 0);

  // Kick: force an agent offline (404 for an unknown one).
  const kicked = await send("POST", `/api/agents/${agent.agent_id}/kick`);
  expect("POST /api/agents/{id}/kick", kicked, 200, [
    "ok",
    "agent_id",
    "threads_interrupted",
    "sessions_disconnected_count",
  ]);
  assert.equal((await send("GET", `/api/agents/${agent.agent_id}`)).body.is_online, false);
  expect("POST /api/agents/{id}/kick (missing)", await send("POST", "/api/agents/x/kick"), 404);

  // Delete, then unregister.
  expect("DELETE /api/threads/{id}", await send("DELETE", `/api/threads/${id}`), 200);
  expect(
    "GET /api/threads/{id}/messages (deleted)",
    await send("GET", `/api/threads/${id}/messages`),
    404,
  );
  expect("POST /api/agents/unregister", await send("POST", "/api/agents/unregister", creds), 200);
});
