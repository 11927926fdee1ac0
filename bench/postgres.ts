/**
 * The PostgreSQL store, on a throwaway cluster of this machine's Debian
 * PostgreSQL with its default durability (every commit flushed to disk):
 * delivery across two server processes, throughput with four senders on one
 * topic and on four, delivery between two `agent-bus http` nodes, the same
 * load on four topics through one node and through two, and what waiting
 * peers send to the server while nothing happens (counted exactly from the
 * server's statement log, between two marker statements).
 *
 * @module
 */

import postgres from "postgres";
import { connectHttp, startHttpServer } from "../tests/_helpers/http.ts";
import { type Postgres, postgresBin, startPostgres } from "../tests/_helpers/postgres.ts";
import { type Distribution, distribution } from "./_stats.ts";
import { withWaitingPeers } from "./idle.ts";
import { benchLatency } from "./latency.ts";
import { benchThroughput, type ThroughputResult } from "./throughput.ts";

/** What the PostgreSQL rows measured. */
export interface PostgresResult {
  version: string;
  latency: Distribution;
  /** 4 senders × 10 per call on one topic. */
  throughput: ThroughputResult;
  /** The same spread over four topics. */
  fourTopics: ThroughputResult;
  nodes: Distribution;
  /** 4 HTTP sessions × 10 per call on four topics, through one node and spread over two. */
  nodeThroughput: { one: NodeThroughput; two: NodeThroughput };
  idle: { peers: number; seconds: number; queries: number };
}

/**
 * Run the PostgreSQL benchmarks, or return undefined when PostgreSQL is not
 * installed here.
 */
export async function benchPostgres(
  dir: string,
  options: { samples: number; seconds: number; idleSeconds: number },
): Promise<PostgresResult | undefined> {
  if ("unavailable" in await postgresBin()) return undefined;
  await using pg = await startPostgres({ durable: true });
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    const database = async (name: string) => {
      await sql.unsafe(`CREATE DATABASE ${name}`);
      return pg.url.replace(/\/bus$/, `/${name}`);
    };
    const version = (await sql`SHOW server_version`)[0]!.server_version;
    const latency = await benchLatency(dir, options.samples, await database("latency"));
    const throughput = await benchThroughput(dir, {
      senders: 4,
      perCall: 10,
      seconds: options.seconds,
      dbPath: await database("throughput"),
    });
    const fourTopics = await benchThroughput(dir, {
      senders: 4,
      perCall: 10,
      topics: 4,
      seconds: options.seconds,
      dbPath: await database("four_topics"),
    });
    const nodes = await benchNodes(await database("nodes"), options.samples);
    const nodeThroughput = {
      one: await benchNodeThroughput(await database("one_node"), 1, options.seconds),
      two: await benchNodeThroughput(await database("two_nodes"), 2, options.seconds),
    };
    const idle = await benchIdleQueries(pg, sql, await database("idle"), options.idleSeconds);
    return {
      version: String(version),
      latency,
      throughput,
      fourTopics,
      nodes,
      nodeThroughput,
      idle,
    };
  } finally {
    await sql.end();
  }
}

/** A sync waiting on one `agent-bus http` node, woken by a send through another. */
async function benchNodes(url: string, samples: number): Promise<Distribution> {
  await using one = await startHttpServer({ dbPath: url });
  await using two = await startHttpServer({ dbPath: url });
  await using sender = await connectHttp(`${one.url}/mcp`);
  await using receiver = await connectHttp(`${two.url}/mcp`);
  const topic = await sender.ok("topic_create", { name: "nodes" });
  await sender.ok("topic_join", { agent_name: "on-one", topic_id: topic.topic_id });
  await receiver.ok("topic_join", { agent_name: "on-two", topic_id: topic.topic_id });
  const warmup = 10;
  const times: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const waiting = receiver.ok("sync", { topic_id: topic.topic_id, wait_seconds: 30 });
    // The receiver's node logs nothing per wait; give its call time to park.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    await sender.ok("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: `ping ${i}` }],
      wait_seconds: 0,
    });
    const result = await waiting;
    if ((result.received as unknown[]).length !== 1) throw new Error(`sample ${i}: not received`);
    if (i >= warmup) times.push(performance.now() - started);
  }
  return distribution(times);
}

/** Messages per second through `agent-bus http` nodes, and the loss check. */
export interface NodeThroughput {
  nodes: number;
  perSecond: number;
  sent: number;
  /** Acknowledged but not stored (must be 0). */
  lost: number;
}

/**
 * Four MCP sessions over Streamable HTTP, each sending 10 messages per
 * `sync` to a topic of its own for `seconds`, all through one node or
 * spread over `nodes` nodes; then every topic is read back in full.
 */
async function benchNodeThroughput(
  url: string,
  nodes: number,
  seconds: number,
): Promise<NodeThroughput> {
  const servers = await Promise.all(
    Array.from({ length: nodes }, () => startHttpServer({ dbPath: url })),
  );
  const clients = await Promise.all(
    Array.from({ length: 4 }, (_, i) => connectHttp(`${servers[i % nodes]!.url}/mcp`)),
  );
  try {
    const topics: string[] = [];
    for (const [i, client] of clients.entries()) {
      const topic = await client.ok("topic_create", { name: `node-load-${i}` });
      topics.push(topic.topic_id as string);
      await client.ok("topic_join", { agent_name: `sender-${i}`, topic_id: topic.topic_id });
    }
    let sent = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(clients.map(async (client, i) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const outbox = Array.from({ length: 10 }, (_, k) => ({
          content_markdown: `session ${i} message ${n}.${k}: the quick brown fox`,
          client_message_id: `n${i}-${n}-${k}`,
        }));
        await client.ok("sync", { topic_id: topics[i], outbox, max_items: 1, wait_seconds: 0 });
        sent += outbox.length;
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    let stored = 0;
    await using reader = await connectHttp(`${servers[0]!.url}/mcp`);
    for (const topic of topics) {
      await reader.ok("topic_join", { agent_name: "reader", topic_id: topic });
      for (;;) {
        const got = await reader.ok("sync", { topic_id: topic, max_items: 20, wait_seconds: 0 });
        const count = (got.received as unknown[]).length;
        stored += count;
        if (count === 0) break;
      }
    }
    return { nodes, perSecond: sent / elapsed, sent, lost: Math.max(0, sent - stored) };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(servers.map((server) => server[Symbol.asyncDispose]()));
  }
}

/**
 * Park `peers` servers in `sync` and count the statements the server
 * receives from anyone in `seconds` (its statement log, between markers).
 */
function benchIdleQueries(
  pg: Postgres,
  sql: postgres.Sql,
  url: string,
  seconds: number,
  peers = 8,
): Promise<{ peers: number; seconds: number; queries: number }> {
  return withWaitingPeers(url, { peers, seconds }, async () => {
    await sql`ALTER SYSTEM SET log_statement = 'all'`;
    await sql`SELECT pg_reload_conf()`;
    // Let the reload reach every backend, and the indexers' last rounds after the joins run.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await sql`SELECT 'agent-bus idle start'`;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    await sql`SELECT 'agent-bus idle end'`;
    await sql`ALTER SYSTEM RESET log_statement`;
    await sql`SELECT pg_reload_conf()`;
    const lines = (await Deno.readTextFile(pg.logFile)).split("\n");
    const start = lines.findIndex((line) => line.includes("agent-bus idle start"));
    const end = lines.findIndex((line) => line.includes("agent-bus idle end"));
    // Every statement logged between the two markers' own lines.
    const queries = lines.slice(start + 1, end)
      .filter((line) => /LOG: {2}(statement|execute)/.test(line)).length;
    return { peers, seconds, queries };
  });
}
