/**
 * What bounds the rate of sends on PostgreSQL whatever the cores, topics or
 * hosts: the commit lock, which every send holds from its first write
 * outside its topic to its commit (`lib/store/postgres/locks.ts`: it keeps
 * message positions in commit order). Measured on the server's own clock,
 * so no network is in it: the statements a `sync` sends under that lock
 * (read from the server's statement log of a real one: the message,
 * positioned at `MAX(rowid) + 1`, the topics version, the notification;
 * its full-text row and the topic's counter go in before the lock), then `COMMIT`
 * on a cluster with its default durability (the commit flushed to disk),
 * for 1 and 10 messages per send. The ceiling is the messages of a send
 * over the time the lock is held for it. (The statements are prepared
 * once, as the store's are; the bench sends each transaction whole, as the
 * store does, so the server never waits for the network inside it.)
 *
 * @module
 */

import postgres from "postgres";
import { startPeer } from "../tests/_helpers/peer.ts";
import { postgresBin, startPostgres } from "../tests/_helpers/postgres.ts";
import { COMMIT_LOCK } from "../lib/store/postgres/locks.ts";
import { CHANNEL } from "../lib/store/postgres/mod.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** The lock held for sends of `perSend` messages, and the rate it allows. */
export interface CommitHold {
  perSend: number;
  /** From the lock granted to the commit done, ms (server clock). */
  hold: Distribution;
  /** Messages per second if sends did nothing but hold the lock, at the p50 hold. */
  ceiling: number;
}

/** Measure the hold for 1 and 10 messages per send, or undefined without PostgreSQL. */
export async function benchCommitHold(samples: number): Promise<CommitHold[] | undefined> {
  if ("unavailable" in await postgresBin()) return undefined;
  await using pg = await startPostgres({ durable: true });
  // (A real server makes the schema and the topic.)
  const topicId = await (async () => {
    await using peer = await startPeer({ dbPath: pg.url, resident: false });
    const topic = await peer.ok("topic_create", { name: "commit hold" });
    await peer.ok("topic_join", { agent_name: "writer", topic_id: topic.topic_id });
    await peer.ok("sync", {
      topic_id: topic.topic_id,
      outbox: [{ content_markdown: "first" }],
      wait_seconds: 0,
    });
    return String(topic.topic_id);
  })();
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`SELECT next_seq FROM topic_seq WHERE topic_id = ${topicId}`;
    let next = Number(row!.next_seq);
    for (const statement of PREPARED) await sql.unsafe(statement);
    const results: CommitHold[] = [];
    for (const perSend of [1, 10]) {
      const holds: number[] = [];
      for (let i = 0; i < samples + 20; i++) {
        const statements = sendUnderLock(topicId, next, perSend);
        next += perSend;
        const times = (await sql.unsafe(statements) as unknown as { t?: string }[][])
          .flat().filter((row) => row.t !== undefined).map((row) => Number(row.t));
        if (i >= 20) holds.push(times[1]! - times[0]!);
      }
      const hold = distribution(holds);
      results.push({ perSend, hold, ceiling: (perSend * 1000) / hold.p50 });
    }
    return results;
  } finally {
    await sql.end();
  }
}

/**
 * The statements a `sync` runs under the lock, prepared once on the
 * connection as the store prepares its own (so that no parsing or planning
 * is timed that a real send does not do).
 */
const PREPARED = [
  `PREPARE index_row (text, text, text, text) AS
     INSERT INTO bus_fts (content_markdown, terms, message_id, topic_id) VALUES ($1, $2, $3, $4)`,
  `PREPARE message (text, text, bigint, text, double precision) AS
     INSERT INTO messages (rowid, message_id, topic_id, seq, sender, message_type, reply_to,
       content_markdown, metadata_json, client_message_id, created_at)
     VALUES ((SELECT COALESCE(MAX(rowid), 0) + 1 FROM messages), $1, $2, $3, 'writer', 'message',
       NULL, $4, NULL, NULL, $5)`,
  `PREPARE counter (bigint, double precision, text) AS
     UPDATE topic_seq SET next_seq = $1, updated_at = $2 WHERE topic_id = $3`,
  `PREPARE topics_version AS
     UPDATE meta SET value = CAST(COALESCE(value, '0') AS INTEGER) + 1 WHERE key = 'topics_version'`,
  `PREPARE notify (text, text) AS SELECT pg_notify($1, $2)`,
];

/**
 * One send's transaction as one simple query (no network round trip inside
 * it, as the store sends it): the index rows and the topic's counter (under
 * the topic's lock, not timed here), the commit lock, the time, the prepared statements,
 * `COMMIT`, the time again.
 */
function sendUnderLock(topicId: string, seq: number, messages: number): string {
  const now = Date.now() / 1000;
  const content = "the quick brown fox jumps over the lazy dog, see `catchUpIndex()` in search.ts";
  const ids = Array.from(
    { length: messages },
    () => crypto.randomUUID().replaceAll("-", "").slice(0, 24),
  );
  const indexRows = ids.map((id, k) =>
    `EXECUTE index_row('${content} ${k}', 'catchUpIndex', '${id}', '${topicId}');`
  ).join("\n");
  const sends = ids.map((id, k) =>
    `EXECUTE message('${id}', '${topicId}', ${seq + k}, '${content} ${k}', ${now});`
  ).join("\n");
  const epoch = "SELECT EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS t";
  return `BEGIN;
    ${indexRows}
    EXECUTE counter(${seq + messages}, ${now}, '${topicId}');
    SELECT pg_advisory_xact_lock(${COMMIT_LOCK});
    ${epoch};
    ${sends}
    EXECUTE topics_version;
    EXECUTE notify('${CHANNEL}', '${topicId}');
    COMMIT;
    ${epoch};`;
}
