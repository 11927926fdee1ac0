/**
 * Bad-input fuzzing of direct mail: random and adversarial calls to the
 * peer-bus tools over stdio and to the mailbox shorthand over HTTP,
 * interleaved on one database. Neither server dies, every error has a
 * known code and a fitting HTTP status, mail that was accepted is
 * delivered exactly once, and the database passes PRAGMA integrity_check.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { profile } from "../../lib/mcp/profiles/mod.ts";
import { startHttpServer } from "../_helpers/http.ts";
import { startPeer } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { fuzzer, NASTY_STRINGS } from "./_fuzz.ts";
import { prng, SEED, size } from "./_size.ts";

const CALLS = size(3000, 600);
const KNOWN_CODES = new Set(["INVALID_ARGUMENT", "MAILBOX_FULL", "DB_BUSY"]);
const PEERBUS_TOOLS = profile("peerbus").tools.map((tool) => tool.name);
const HTTP_STATUS = new Set([200, 400, 404, 429, 503]);

Deno.test(`mail survives ${CALLS} random and adversarial calls over stdio and HTTP (seed ${SEED})`, async () => {
  const random = prng(SEED + 1);
  const { pick, value } = fuzzer(random);
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/fuzz.sqlite`;
  const env = { AGENT_BUS_MAX_MAILBOX_DEPTH: "50" };
  await using peer = await startPeer({
    dbPath,
    env,
    args: ["--profile", "peerbus", "--agent", "fuzzer"],
  });
  await using other = await startPeer({
    dbPath,
    env,
    args: ["--profile", "peerbus", "--agent", "other"],
  });
  await using http = await startHttpServer({ dbPath, env });

  const names = ["other", "fuzzer", "web", ...NASTY_STRINGS.slice(0, 10)];
  const base = (tool: string): Record<string, unknown> => {
    switch (tool) {
      case "bus.send":
        return { to: "other", body: { k: [1, "two"] } };
      case "bus.broadcast":
        return { body: "hello all" };
      case "send_to_agent":
        return { name: "web", msg: "hi", msg_id: `m-${Math.floor(random() * 50)}` };
      default:
        return {};
    }
  };
  const mutate = (args: Record<string, unknown>): Record<string, unknown> => {
    const mutation = random();
    const keys = Object.keys(args);
    if (mutation < 0.4 && keys.length > 0) {
      args[pick(keys)] = random() < 0.5 ? value() : pick(names);
    } else if (mutation < 0.5) args[pick(["extra", "__proto__", "to", "name"])] = value();
    else if (mutation < 0.6 && keys.length > 0) delete args[pick(keys)];
    return args;
  };

  let accepted = 0;
  for (let i = 0; i < CALLS; i++) {
    if (random() < 0.5) {
      const tool = random() < 0.03 ? pick(["", "bus.nope", "bus_send"]) : pick(PEERBUS_TOOLS);
      const args = mutate(base(tool));
      const result = await peer.call(tool, args);
      if (result.isError) {
        const error = (result.structuredContent as { error?: { code?: string } })?.error;
        assert.ok(
          error?.code && KNOWN_CODES.has(error.code),
          `call ${i}: ${JSON.stringify(result).slice(0, 400)}`,
        );
      } else if (
        tool === "bus.send" && (result.structuredContent as { to: string }).to === "other"
      ) {
        accepted++;
      }
      continue;
    }
    // The HTTP shorthand, with bodies that are sometimes not even objects.
    const agent = pick(["alice", "web", "alice", "%2e%2e", "a%20b", "x".repeat(80)]);
    const tool = pick(["send_to_agent", "check_mail", "send_to_agent", "nope"]);
    const shape = random();
    const body = shape < 0.8
      ? JSON.stringify({ tool, args: mutate(base(tool)) })
      : shape < 0.9
      ? JSON.stringify(value())
      : pick(["", "{", "[1,2", "\u0000", '{"tool": 5}']);
    const response = await fetch(`${http.url}/agents/${agent}/mcp/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.ok(
      HTTP_STATUS.has(response.status),
      `call ${i}: HTTP ${response.status} for ${body.slice(0, 200)}`,
    );
    const answer = await response.json();
    if (
      response.status !== 200 && answer.error?.code !== undefined &&
      typeof answer.error.code === "string"
    ) {
      assert.ok(
        KNOWN_CODES.has(answer.error.code),
        `call ${i}: ${JSON.stringify(answer).slice(0, 400)}`,
      );
    }
  }
  assert.equal((await peer.ok("bus.peers")).self, "fuzzer", "the stdio server is alive");
  assert.equal(
    (await fetch(`${http.url}/mcp`, { method: "POST", body: '{"tool":"ping"}' })).status,
    200,
  );

  // Every message accepted for "other" arrives exactly once (drain until empty).
  const ids: string[] = [];
  for (;;) {
    const { messages, has_more } = await other.ok("bus.drain") as {
      messages: { id: string; from: string }[];
      has_more: boolean;
    };
    ids.push(...messages.filter((m) => m.from === "fuzzer").map((m) => m.id));
    if (!has_more) break;
  }
  assert.ok(accepted > 0, "some sends were accepted");
  assert.equal(new Set(ids).size, ids.length, "no message twice");
  assert.ok(ids.length >= accepted, `accepted ${accepted}, delivered ${ids.length}`);
  assert.doesNotMatch(peer.stderr() + http.stderr(), /failed unexpectedly|Uncaught|panicked/);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const check = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
  db.close();
  assert.equal(check.integrity_check, "ok");
});
