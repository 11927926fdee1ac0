/**
 * One deadline for a call on PostgreSQL (`lib/store/call_deadline.ts`):
 * against a real `agent-bus http` node on a throwaway cluster, behind a
 * proxy that stalls without closing anything, a call fails with
 * `DB_UNAVAILABLE` within `AGENT_BUS_BUSY_TIMEOUT_MS` + 2 s however many
 * steps it takes; with the server down, calls fail as fast and recover by
 * themselves; and a session's first `tools/list` during the stall is
 * answered by the node's front, without the database.
 */

import assert from "node:assert/strict";
import { connectHttp, startHttpServer } from "../_helpers/http.ts";
import { startStallProxy } from "../_helpers/pg_fleet.ts";
import { until } from "../_helpers/peer.ts";
import { clusterTest } from "../_helpers/postgres.ts";

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

await clusterTest(
  "with PostgreSQL down an HTTP node's calls fail within the deadline and recover by themselves",
  async (pg) => {
    await using node = await startHttpServer({ dbPath: pg.url, env: ENV });
    await using client = await connectHttp(`${node.url}/mcp`);
    await client.ok("topic_create", { name: "before" });
    await pg.stop("immediate");
    for (const tool of ["topic_list", "topic_create", "topic_list"]) {
      const failed = await failing(() =>
        client.call(tool, tool === "topic_create" ? { name: "during" } : {})
      );
      assert.equal(failed.code, "DB_UNAVAILABLE", failed.message);
      assert.ok(failed.ms < DEADLINE_MS + SLACK_MS, `${tool}: ${failed.ms.toFixed(0)} ms`);
    }
    const rest = await fetch(`${node.url}/api/topics`);
    assert.equal(rest.status, 503);
    await rest.body?.cancel();
    await pg.start();
    await until(async () => !(await client.call("topic_list", {})).isError, {
      timeoutMs: 30_000,
      what: "recovery",
    });
    const names = ((await client.ok("topic_list", {})).topics as { name: string }[]).map((t) =>
      t.name
    );
    assert.deepEqual(names, ["before"]);
  },
);
