/**
 * What a client that stops reading costs the server: `agent-bus http` with
 * N connections that open `/events` or `/api/events` and never read, while
 * 30 MB of messages are posted; the growth of the server's resident memory
 * against the same run with none (the server's own churn), per stuck
 * stream. Unbounded, each would hold all 30 MB; bounded, at most
 * `MAX_QUEUED_EVENT_BYTES` (4 MiB) and what the kernel buffers.
 *
 * @module
 */

import { startHttpServer } from "../tests/_helpers/http.ts";

/** Memory of one configuration. */
export interface StuckStreams {
  stuck: number;
  /** Growth of the server's resident memory while the posts went by, MB. */
  grownMB: number;
}

/** Memory per stuck stream: the runs with and without them, and the difference per stream. */
export interface StreamsResult {
  runs: StuckStreams[];
  perStreamMB: number;
  postedMB: number;
}

async function rssMB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function run(dir: string, stuck: number, posts: number): Promise<StuckStreams> {
  await using server = await startHttpServer({ dbPath: `${dir}/streams-${stuck}.sqlite` });
  const created = await (await fetch(`${server.url}/api/topics`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "flood" }),
  })).json();
  const topicId = created.topic.topic_id as string;
  const conns: Deno.TcpConn[] = [];
  for (let i = 0; i < stuck; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    const path = i % 2 === 0 ? "/events" : `/api/events?topic_id=${topicId}`;
    await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    conns.push(conn);
  }
  const before = await rssMB(server.pid);
  const body = "x".repeat(60_000);
  for (let i = 0; i < posts; i++) {
    const posted = await fetch(`${server.url}/api/topics/${topicId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content_markdown: `${i} ${body}` }),
    });
    await posted.body?.cancel();
  }
  const grownMB = (await rssMB(server.pid)) - before;
  for (const conn of conns) conn.close();
  return { stuck, grownMB };
}

/** Run without and with `stuck` streams that never read. */
export async function benchStreams(dir: string, stuck: number): Promise<StreamsResult> {
  const posts = 500;
  const none = await run(dir, 0, posts);
  const some = await run(dir, stuck, posts);
  return {
    runs: [none, some],
    perStreamMB: Math.max(0, some.grownMB - none.grownMB) / stuck,
    postedMB: (posts * 60_000) / 1e6,
  };
}
