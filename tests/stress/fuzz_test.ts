/**
 * Bad-input fuzzing: thousands of tool calls with random and adversarial
 * arguments against one live server. The server never dies, every answer is
 * a valid MCP result (the SDK client checks it against the tool's output
 * schema), every error carries a known code (never INTERNAL_ERROR), and the
 * database passes PRAGMA integrity_check afterwards.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { profile } from "../../lib/mcp/profiles/mod.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { fuzzer, NASTY_STRINGS } from "./_fuzz.ts";
import { prng, SEED, size } from "./_size.ts";

const CALLS = size(5000, 1000);
const KNOWN_CODES = new Set([
  "TOPIC_NOT_FOUND",
  "TOPIC_CLOSED",
  "AGENT_NAME_IN_USE",
  "INVALID_ARGUMENT",
  "DB_BUSY",
  "AGENT_NOT_JOINED",
]);
const TOOLS = profile("peer").tools.map((tool) => tool.name);

Deno.test(`the server survives ${CALLS} random and adversarial tool calls (seed ${SEED})`, async () => {
  const random = prng(SEED);
  const { pick, value } = fuzzer(random);

  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/fuzz.sqlite`;
  await using peer = await startPeer({ dbPath, env: { AGENT_BUS_MAX_WAIT_SECONDS: "0" } });
  const topicId = (await peer.ok("topic_create", { name: "fuzz" })).topic_id as string;
  await peer.ok("topic_join", { agent_name: "fuzzer", topic_id: topicId });
  const seqs = (await peer.ok("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: "seed message" }],
    wait_seconds: 0,
  })).sent as { message: { message_id: string } }[];
  const messageId = seqs[0]!.message.message_id;

  const base = (tool: string): Record<string, unknown> => {
    switch (tool) {
      case "topic_create":
        return { name: "fuzz-topic", mode: "new" };
      case "topic_list":
        return { status: "all" };
      case "topic_resolve":
        return { name: "fuzz" };
      case "topic_close":
        return { topic_id: topicId, reason: "maybe" };
      case "topic_join":
        return { agent_name: "fuzzer", topic_id: topicId };
      case "topic_presence":
        return { topic_id: topicId, window_seconds: 60 };
      case "cursor_reset":
        return { topic_id: topicId, last_seq: 0 };
      case "messages_search":
        return {
          query: "seed message",
          mode: "fts",
          sender: "fuzzer",
          since: 0,
          until: "2999-01-01",
        };
      case "sync":
        return {
          topic_id: topicId,
          outbox: [{ content_markdown: "fuzz", reply_to: messageId, metadata: { k: 1 } }],
          wait_seconds: 0,
        };
      default:
        return {};
    }
  };

  const counts = { ok: 0, error: 0 };
  for (let i = 0; i < CALLS; i++) {
    const tool = random() < 0.02 ? pick(["", "nope", "sync ", "SYNC"]) : pick(TOOLS);
    let args = base(tool);
    const mutation = random();
    if (mutation < 0.45) {
      const keys = Object.keys(args);
      if (keys.length > 0) args[pick(keys)] = value();
    } else if (mutation < 0.55) {
      args[pick(["extra", "topicId", "content", "__proto__"])] = value();
    } else if (mutation < 0.65) {
      const keys = Object.keys(args);
      if (keys.length > 0) delete args[pick(keys)];
    } else if (mutation < 0.8) {
      args = Object.fromEntries(Object.keys(args).map((key) => [key, value()]));
    } else if (tool === "sync" && mutation < 0.9) {
      args.outbox = Array.from({ length: Math.floor(random() * 5) }, () => ({
        content_markdown: pick(NASTY_STRINGS),
        message_type: value(),
        client_message_id: value(),
        metadata: value(),
      }));
    }
    const result = await peer.call(tool, args).catch((error: unknown) => {
      throw new Error(
        `call ${i} to ${tool} with ${JSON.stringify(args).slice(0, 300)} threw: ${error}`,
      );
    });
    if (result.isError) {
      counts.error++;
      const error = (result.structuredContent as { error?: { code?: string; message?: string } })
        ?.error;
      assert.ok(
        error?.code && KNOWN_CODES.has(error.code),
        `call ${i}: unexpected ${JSON.stringify(result).slice(0, 500)}`,
      );
      assert.ok(error.message && error.message.length > 0);
    } else {
      counts.ok++;
      assert.ok(result.structuredContent, `call ${i}: a success without structuredContent`);
    }
  }
  assert.equal((await peer.ok("ping")).ok, true, "the server is alive");
  assert.ok(
    counts.ok > CALLS / 20 && counts.error > CALLS / 5,
    `a useful mix: ${JSON.stringify(counts)}`,
  );
  assert.doesNotMatch(peer.stderr(), /failed unexpectedly|Uncaught|panicked/);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const check = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
  db.close();
  assert.equal(check.integrity_check, "ok");
});
