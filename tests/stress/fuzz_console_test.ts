/**
 * Bad-input fuzzing of the web console's REST API: random and adversarial
 * paths, query strings and bodies against a real `agent-bus http` process,
 * while a live event stream is open. The server never dies or answers 500,
 * every error is `{error: {code, message}}` with a known code, every posted
 * message is stored once and announced on the event stream in order, and
 * the database passes PRAGMA integrity_check.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { startHttpServer } from "../_helpers/http.ts";
import { openEvents } from "../_helpers/sse.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { fuzzer } from "./_fuzz.ts";
import { prng, SEED, size } from "./_size.ts";

const CALLS = size(2000, 400);
const KNOWN_CODES = new Set([
  "INVALID_ARGUMENT",
  "TOPIC_NOT_FOUND",
  "TOPIC_CLOSED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "UNSUPPORTED_MEDIA_TYPE",
  "PAYLOAD_TOO_LARGE",
  "DB_BUSY",
]);
const QUERY_KEYS = [
  "status",
  "q",
  "sort",
  "limit",
  "messages",
  "after_seq",
  "before_seq",
  "format",
  "mode",
  "topic_id",
  "window_seconds",
];

Deno.test(`the REST API survives ${CALLS} random and adversarial requests (seed ${SEED})`, async () => {
  const random = prng(SEED + 7);
  const { pick, value } = fuzzer(random);
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/fuzz.sqlite`;
  await using server = await startHttpServer({
    dbPath,
    env: { AGENT_BUS_EMBEDDINGS_URL: "http://127.0.0.1:9" },
  });
  const create = await fetch(`${server.url}/api/topics`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "fuzzed" }),
  });
  const topicId = (await create.json()).topic.topic_id as string;
  await using events = await openEvents(`${server.url}/api/events?topic_id=${topicId}`);
  await events.next((e) => e.event === "ready");

  const ids = [
    topicId,
    topicId,
    "nope",
    "",
    "..",
    "%00",
    "%E0%A4%A",
    "%ZZ",
    encodeURIComponent("🚀' OR 1=1 --"),
    "x".repeat(5000),
  ];
  const paths = () => {
    const id = pick(ids);
    return pick([
      "/api/topics",
      `/api/topics/${id}`,
      `/api/topics/${id}/messages`,
      `/api/topics/${id}/messages`,
      `/api/topics/${id}/export`,
      `/api/topics/${id}/close`,
      "/api/search",
      "/api/presence",
      "/api/openapi.json",
      "/api/nope",
      `/api/topics/${id}/messages/extra`,
    ]);
  };
  const query = () => {
    const params = new URLSearchParams();
    for (let k = 0; k < Math.floor(random() * 4); k++) {
      const v = value();
      params.set(
        pick(QUERY_KEYS),
        (typeof v === "string" ? v : JSON.stringify(v) ?? "").slice(0, 3000),
      );
    }
    return params.size ? `?${params}` : "";
  };
  /** A post body: a plain valid one when `clean`, else mutated in random ways. */
  const body = (clean = false) => {
    if (clean) return JSON.stringify({ content_markdown: `m-${Math.floor(random() * 1e6)}` });
    const roll = random();
    if (roll < 0.1) return "not json";
    if (roll < 0.2) return JSON.stringify(value());
    const fields: Record<string, unknown> = { content_markdown: `m-${Math.floor(random() * 1e6)}` };
    for (
      const key of ["sender", "message_type", "reply_to", "client_message_id", "name", "reason"]
    ) {
      if (random() < 0.3) fields[key] = value();
    }
    if (random() < 0.2) fields.content_markdown = value();
    return JSON.stringify(fields);
  };

  const posted: string[] = [];
  let attempts = 0;
  let closeAllowed = false;
  for (let i = 0; i < CALLS; i++) {
    // A third are posts to the watched topic (with mutated fields); the rest anything.
    const posting = random() < 0.3;
    const path = posting ? `/api/topics/${topicId}/messages` : paths();
    // Keep the main topic open until the last tenth, so posts keep landing.
    if (path === `/api/topics/${topicId}/close` && !closeAllowed) continue;
    const method = posting || random() < 0.45
      ? "POST"
      : random() < 0.95
      ? "GET"
      : pick(["PUT", "DELETE"]);
    // Every third post is left valid, so the stream check below has enough to check whatever the seed.
    if (posting) attempts++;
    const sent = method === "POST" ? body(posting && attempts % 3 === 0) : undefined;
    const response = await fetch(`${server.url}${path}${posting ? "" : query()}`, {
      method,
      headers: posting || random() < 0.9 ? { "content-type": "application/json" } : {},
      body: sent,
    });
    const text = await response.text();
    const where = `request ${i}: ${method} ${path} -> ${response.status} ${text.slice(0, 300)}`;
    assert.ok(response.status < 500, where);
    if (response.status >= 400) {
      const error = JSON.parse(text).error;
      assert.ok(KNOWN_CODES.has(error?.code) && typeof error.message === "string", where);
    } else if (
      method === "POST" && path === `/api/topics/${topicId}/messages` && response.status === 201
    ) {
      posted.push(JSON.parse(text).message.message_id);
    }
    closeAllowed = i > CALLS * 0.9;
  }

  // Every accepted post is stored once and came down the event stream, in order.
  assert.ok(posted.length > 10, `only ${posted.length} posts were accepted`);
  const announced: string[] = [];
  while (announced.length < posted.length) {
    const event = await events.next((e) => e.event === "message");
    announced.push((event.data as { message: { message_id: string } }).message.message_id);
  }
  assert.deepEqual(announced, posted);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const rows = db.prepare("SELECT message_id FROM messages WHERE topic_id = ? ORDER BY seq")
      .all(topicId) as { message_id: string }[];
    assert.deepEqual(rows.map((r) => r.message_id), posted);
    assert.equal(
      (db.prepare("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check,
      "ok",
    );
  } finally {
    db.close();
  }
  const alive = await fetch(`${server.url}/api/topics`);
  assert.equal(alive.status, 200);
  await alive.body?.cancel();
});
