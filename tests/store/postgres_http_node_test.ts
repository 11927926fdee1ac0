/**
 * An `agent-bus http` node on PostgreSQL serves its sessions from workers
 * with connections of their own (`lib/transports/http/node_pool.ts`): while
 * one session's call waits for the database, the node's other sessions are
 * served — their calls on their own workers, `ping` and `tools/list` by the
 * node's front. Before, the node's one thread blocked for every wait. Here
 * rather than in `tests/transports/`, like every test with a cluster of its
 * own. Skipped where Debian's PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { lockStatements } from "../../lib/store/postgres/locks.ts";
import { connectHttp, type HttpClient, startHttpServer } from "../_helpers/http.ts";
import { answeredWithin, retriedAfterStall, startStallProxy } from "../_helpers/pg_fleet.ts";
import { clusterTest } from "../_helpers/postgres.ts";

/** Far below what the waiting call waits (the lock wait, or the 5 s stall deadline). */
const ANSWER_MS = 1000;

function timed<T>(what: string, call: () => Promise<T>): Promise<T> {
  return answeredWithin(ANSWER_MS, what, call);
}

/** Open a topic with `client` in it. */
async function joinedTopic(client: HttpClient, name: string): Promise<string> {
  const topic = await client.ok("topic_create", { name });
  await client.ok("topic_join", { agent_name: `${name}-agent`, topic_id: topic.topic_id });
  return topic.topic_id as string;
}

function send(client: HttpClient, topicId: string, text: string) {
  return client.call("sync", {
    topic_id: topicId,
    outbox: [{ content_markdown: text, client_message_id: text }],
    wait_seconds: 0,
  });
}

function seqOf(result: { structuredContent?: unknown }): number {
  return (result.structuredContent as { sent: { message: { seq: number } }[] }).sent[0]!.message
    .seq;
}

await clusterTest(
  "an HTTP node on PostgreSQL serves its other sessions while one waits for a lock",
  async (pg) => {
    await using node = await startHttpServer({
      dbPath: pg.url,
      env: { AGENT_BUS_HTTP_WORKERS: "2", AGENT_BUS_BUSY_TIMEOUT_MS: "30000" },
    });
    // The node gives each new session the worker with the fewest: one each.
    await using waiting = await connectHttp(`${node.url}/mcp`);
    await using other = await connectHttp(`${node.url}/mcp`);
    // (As clients do at the start of a session; the node's front keeps the answer.)
    const tools = await waiting.client.listTools();
    const held = await joinedTopic(waiting, "held");
    const free = await joinedTopic(other, "free");

    // Another host holds the topic's lock in an open transaction.
    const sql = postgres(pg.url, { max: 2, onnotice: () => {} });
    const holder = await sql.reserve();
    await holder`BEGIN`;
    for (const statement of lockStatements([held])) await holder.unsafe(statement.sql);
    let settled = false;
    const stuck = send(waiting, held, "behind-the-lock").finally(() => settled = true);
    try {
      while ((await sql`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`)[0]!.n < 1);
      const sent = await timed("a send on another session", () => send(other, free, "free-1"));
      assert.equal(seqOf(sent), 1);
      await timed("ping on the waiting session", () => waiting.client.ping());
      const listed = await timed(
        "tools/list on the waiting session",
        () => waiting.client.listTools(),
      );
      assert.deepEqual(listed, tools);
      await timed("a second send", () => send(other, free, "free-2"));
      assert.equal(settled, false, "the first call was still waiting for the lock meanwhile");
    } finally {
      await holder`ROLLBACK`;
      holder.release();
      await sql.end();
    }
    const result = await stuck;
    assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
    assert.equal(seqOf(result), 1);
  },
);

await clusterTest(
  "an HTTP node on PostgreSQL answers every session's ping and tools/list while its link stalls",
  async (pg) => {
    await using proxy = await startStallProxy(pg.url);
    await using node = await startHttpServer({
      dbPath: proxy.url,
      env: { AGENT_BUS_HTTP_WORKERS: "2" },
    });
    const clients: HttpClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await connectHttp(`${node.url}/mcp`));
    try {
      const [waiting, ...others] = clients as [HttpClient, ...HttpClient[]];
      const tools = (await waiting.client.listTools()).tools.map((tool) => tool.name);
      const topic = await joinedTopic(waiting, "stalled");

      await proxy.stall();
      let settled = false;
      const stuck = send(waiting, topic, "into-the-stall").finally(() => settled = true);
      for (const client of [...others, waiting]) {
        for (let i = 0; i < 3; i++) await timed(`ping ${i}`, () => client.client.ping());
        const listed = await timed("tools/list", () => client.client.listTools());
        assert.deepEqual(listed.tools.map((tool) => tool.name), tools);
      }
      assert.equal(settled, false, "the call was still waiting for the database meanwhile");

      await proxy.resume();
      // Once the link is back, the send (retried with its client_message_id) is stored once.
      const seq = await retriedAfterStall(
        await stuck,
        () => send(waiting, topic, "into-the-stall"),
      );
      assert.equal(seq, 1);
    } finally {
      for (const client of clients) await client.close();
    }
  },
);
