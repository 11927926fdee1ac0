/**
 * Crash safety of mail: the HTTP server is SIGKILLed at random moments
 * while a client sends with msg_ids. After each restart the client retries
 * every send it has no answer for. In the end every acknowledged message is
 * in the mailbox exactly once, the recipient pops each exactly once, and
 * the database is intact.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type HttpServer, shorthand, startHttpServer } from "../_helpers/http.ts";
import { tmpDir } from "../_helpers/tmp.ts";
import { prng, SEED, size } from "./_size.ts";

const KILLS = size(30, 6);

Deno.test(`acknowledged mail survives ${KILLS} SIGKILLs of the HTTP server exactly once (seed ${SEED})`, async () => {
  const random = prng(SEED + 2);
  await using tmp = await tmpDir();
  const dbPath = `${tmp.path}/crash.sqlite`;
  const acked = new Set<string>();
  let next = 0;
  const pending: string[] = [];
  for (let kill = 0; kill <= KILLS; kill++) {
    const server: HttpServer = await startHttpServer({ dbPath });
    const url = `${server.url}/agents/sender/mcp/`;
    const killAfterMs = kill === KILLS ? Infinity : 5 + random() * 60;
    const killer = Number.isFinite(killAfterMs)
      ? setTimeout(() => server.stop("SIGKILL"), killAfterMs)
      : undefined;
    const sendOne = async () => {
      if (pending.length === 0) pending.push(`m-${next++}`);
      const id = pending[0]!;
      const { status, body } = await shorthand(url, "send_to_agent", {
        name: "receiver",
        msg: `body of ${id}`,
        msg_id: id,
      });
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body!.msg_id, id);
      acked.add(id);
      pending.shift();
    };
    try {
      // The unanswered send is retried first; then new mail until the kill
      // (the last server, never killed, sends just one more).
      do await sendOne(); while (kill < KILLS);
    } catch (error) {
      if (kill === KILLS) throw error; // the last server is never killed
      // The server died mid-request: the send stays pending and is retried.
    } finally {
      clearTimeout(killer);
      await server.stop("SIGKILL");
    }
  }
  assert.ok(acked.size > KILLS, `sent ${acked.size} messages across ${KILLS} kills`);

  await using server = await startHttpServer({ dbPath });
  const popped: string[] = [];
  for (;;) {
    const { body } = await shorthand(`${server.url}/agents/receiver/mcp/`, "check_mail");
    const message = body!.message as { id: string; content: string } | null;
    if (!message) break;
    assert.equal(message.content, `body of ${message.id}`);
    popped.push(message.id);
  }
  assert.equal(new Set(popped).size, popped.length, "no message popped twice");
  for (const id of acked) assert.ok(popped.includes(id), `acknowledged ${id} was lost`);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const check = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
  db.close();
  assert.equal(check.integrity_check, "ok");
});
