/**
 * The resident bus on PostgreSQL (`lib/transports/resident/worker_host.ts`):
 * every agent of a host attaches to one bus, whose sessions share its
 * session workers' connections, so the host's connections stay the same
 * whatever the number of agents. Here rather than in `tests/transports/`,
 * like every test with a cluster of its own. Skipped where Debian's
 * PostgreSQL is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { cli } from "../_helpers/cli.ts";
import { type Peer, startPeer } from "../_helpers/peer.ts";
import { clusterTest } from "../_helpers/postgres.ts";

/**
 * What one session worker holds: its query connection, its LISTEN connection
 * and the one that probes it (opened at the first probe, 2 s in).
 */
const PER_WORKER = 3;
/** The default AGENT_BUS_RESIDENT_WORKERS. */
const WORKERS = 2;

/** Connections to the bus's database, other than the one asking. */
async function connections(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`;
    return row!.n as number;
  } finally {
    await sql.end();
  }
}

/** A topic every agent of `peers` joins, each then sending once and reading. */
async function talk(peers: Peer[], topicId: unknown, from: number): Promise<void> {
  await Promise.all(peers.map(async (peer, i) => {
    await peer.ok("topic_join", { agent_name: `agent-${from + i}`, topic_id: topicId });
    await peer.ok("sync", {
      topic_id: topicId,
      outbox: [{ content_markdown: `hello from ${from + i}` }],
      wait_seconds: 0,
    });
  }));
}

await clusterTest(
  "on PostgreSQL, the agents of a host share one resident bus: its workers' connections for 1 agent or 16, and they hear each other",
  async (pg) => {
    const env = { AGENT_BUS_RESIDENT_IDLE_MS: "60000" };
    const peers: Peer[] = [];
    try {
      peers.push(await startPeer({ dbPath: pg.url, resident: true, env }));
      const { topic_id } = await peers[0]!.ok("topic_create", { name: "host" });
      await talk(peers, topic_id, 0);
      const alone = await connections(pg.url);
      assert.ok(alone <= PER_WORKER * WORKERS, `1 agent: ${alone} connections`);

      const more = await Promise.all(
        Array.from({ length: 15 }, () => startPeer({ dbPath: pg.url, resident: true, env })),
      );
      peers.push(...more);
      await talk(more, topic_id, 1);
      const status = JSON.parse(
        (await cli(["bus", "status", "--json"], { AGENT_BUS_DB: pg.url, ...env })).stdout,
      );
      assert.equal(status.sessions, 16, "every entry is a session of the one bus");
      // (Standalone, 16 agents would hold 32 or more.)
      const many = await connections(pg.url);
      assert.ok(many <= PER_WORKER * WORKERS, `16 agents: ${many} connections, 1 agent ${alone}`);

      // One waits (having read what was said); another's send wakes it.
      await peers[3]!.ok("sync", { topic_id, wait_seconds: 0 });
      const waiting = peers[3]!.call("sync", { topic_id, wait_seconds: 30 });
      await peers[12]!.ok("sync", {
        topic_id,
        outbox: [{ content_markdown: "to everyone" }],
        wait_seconds: 0,
      });
      const woke = (await waiting).structuredContent as {
        received: { content_markdown: string }[];
      };
      assert.deepEqual(woke.received.map((m) => m.content_markdown), ["to everyone"]);
    } finally {
      await Promise.all(peers.map((peer) => peer.close()));
      await cli(["bus", "stop"], { AGENT_BUS_DB: pg.url, ...env });
    }
  },
);
