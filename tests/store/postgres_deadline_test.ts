/**
 * One deadline for a call on PostgreSQL (`lib/store/call_deadline.ts`):
 * against a real `agent-bus http` node on a throwaway cluster, behind a
 * proxy that stalls without closing anything, a call fails with
 * `DB_UNAVAILABLE` within `AGENT_BUS_BUSY_TIMEOUT_MS` + 2 s however many
 * steps it takes; with the server stopped under traffic, no call waits for
 * its return (each fails within the outage grace, 5 s, a restart's time, and
 * far inside the default deadline), all recover by themselves and
 * nothing acknowledged is lost; and a session's first `tools/list` during
 * the stall is answered by the node's front, without the database.
 */

import assert from "node:assert/strict";
import { connectHttp, startHttpServer } from "../_helpers/http.ts";
import { startStallProxy } from "../_helpers/pg_fleet.ts";
import { readTopic, until } from "../_helpers/peer.ts";
import { clusterTest } from "../_helpers/postgres.ts";
import { OUTAGE_GRACE_MS } from "../../lib/store/postgres/mod.ts";

/** A short busy timeout: the deadline is then 2 s + 2 s. */
const ENV = { AGENT_BUS_BUSY_TIMEOUT_MS: "2000", AGENT_BUS_HTTP_WORKERS: "2" };
const DEADLINE_MS = 4000;
/** What timers on a loaded machine may add to the deadline (before: a stalled call took 25–55 s). */
const SLACK_MS = 4000;

async function failing(call: () => Promise<{ structuredContent?: unknown }>) {
  const started = performance.now();
  const result = await call();
  const error = (result.structuredContent as { error?: { code: string; message: string } }).error;
  return { ms: performance.now() - started, code: error?.code, message: error?.message ?? "" };
}

await clusterTest(
  "on a stalled link every call of an HTTP node fails within its one deadline, and a first tools/list is answered at once",
  async (pg) => {
    await using proxy = await startStallProxy(pg.url);
    await using node = await startHttpServer({ dbPath: proxy.url, env: ENV });
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await connectHttp(`${node.url}/mcp`));
    try {
      const [writer, reader, fresh] = sessions as [
        typeof sessions[0],
        typeof sessions[0],
        typeof sessions[0],
      ];
      const { topic_id } = await writer.ok("topic_create", { name: "stalled" });
      await writer.ok("topic_join", { agent_name: "w", topic_id });
      await proxy.stall();
      let settled = false;
      const send = failing(() =>
        writer.call("sync", {
          topic_id,
          outbox: [{ content_markdown: "into the stall", client_message_id: "s1" }],
          wait_seconds: 0,
        })
      ).finally(() => settled = true);
      const read = failing(() => reader.call("topic_list", {}));
      // A session that never listed its tools gets them from the front, the call still waiting.
      const tools = await fresh.client.listTools();
      assert.ok(tools.tools.some((tool) => tool.name === "sync"));
      assert.equal(settled, false, "the send was still waiting for the database");
      for (const failed of [await send, await read]) {
        assert.equal(failed.code, "DB_UNAVAILABLE", failed.message);
        assert.ok(
          failed.ms < DEADLINE_MS + SLACK_MS,
          `failed after ${failed.ms.toFixed(0)} ms: ${failed.message}`,
        );
      }
      // While it lasts, later calls fail too, each within the deadline.
      const again = await failing(() => reader.call("topic_list", {}));
      assert.equal(again.code, "DB_UNAVAILABLE");
      assert.ok(again.ms < DEADLINE_MS + SLACK_MS, `${again.ms.toFixed(0)} ms`);

      await proxy.resume();
      await until(async () => !(await reader.call("topic_list", {})).isError, {
        timeoutMs: 30_000,
        what: "recovery after the stall",
      });
    } finally {
      for (const session of sessions) await session.close();
    }
  },
);

/**
 * A stopped server refuses at once: calls wait out its first seconds (a restart) and then
 * fail, each within the grace, well inside the default deadline (12 s) that a stall needs.
 */
const DOWN_MS = OUTAGE_GRACE_MS;
/** How long the server stays down: three graces, so a call that waits for its return shows. */
const OUTAGE_MS = 3 * DOWN_MS;

await clusterTest(
  "with PostgreSQL stopped under traffic, every call of an HTTP node fails within a restart's grace (5 s), all recover by themselves, and nothing acknowledged is lost",
  async (pg) => {
    await using node = await startHttpServer({
      dbPath: pg.url,
      env: { AGENT_BUS_HTTP_WORKERS: "2" },
    });
    const sessions = [];
    for (let i = 0; i < 4; i++) sessions.push(await connectHttp(`${node.url}/mcp`));
    try {
      const topics: string[] = [];
      for (const [i, session] of sessions.entries()) {
        const { topic_id } = await session.ok("topic_create", { name: `t${i}` });
        await session.ok("topic_join", { agent_name: `a${i}`, topic_id });
        topics.push(topic_id as string);
      }
      // Each session sends and lists in a loop, before, through and after the outage, so
      // writes are in flight as the server stops (before, such a call waited out the outage).
      let restarted = false;
      const slow: string[] = [];
      const acknowledged = sessions.map(() => [] as string[]);
      const loops = sessions.map(async (session, i) => {
        for (let n = 0;; n++) {
          const id = `s${i}-${n}`;
          const afterRestart = restarted;
          const sends = n % 3 !== 0;
          const { ms, code, message } = await failing(() =>
            sends
              ? session.call("sync", {
                topic_id: topics[i],
                outbox: [{ content_markdown: id, client_message_id: id }],
                wait_seconds: 0,
              })
              : session.call("topic_list", {})
          );
          if (ms >= DEADLINE_MS + SLACK_MS) {
            slow.push(`${id}: ${code ?? "ok"} after ${ms.toFixed(0)} ms`);
          }
          if (code !== undefined) assert.equal(code, "DB_UNAVAILABLE", message);
          else if (sends) acknowledged[i]!.push(id);
          if (afterRestart && code === undefined) return;
          if (afterRestart) await new Promise((resolve) => setTimeout(resolve, 100));
        }
      });
      await until(() => acknowledged.every((ids) => ids.length >= 2), { what: "traffic" });
      await pg.stop("fast");
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      const rest = await fetch(`${node.url}/api/topics`);
      assert.equal(rest.status, 503);
      await rest.body?.cancel();
      await pg.start();
      restarted = true;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(loops),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error("a session did not recover in 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.deepEqual(slow, [], "calls that outlasted the deadline");
      const auditor = sessions[0]!;
      for (const [i, topic_id] of topics.entries()) {
        await auditor.ok("topic_join", { agent_name: "auditor", topic_id });
        const stored = new Set((await readTopic(auditor, topic_id)).map((m) => m.content_markdown));
        const lost = acknowledged[i]!.filter((id) => !stored.has(id));
        assert.deepEqual(lost, [], "acknowledged, then missing");
      }
    } finally {
      for (const session of sessions) await session.close();
    }
  },
);
