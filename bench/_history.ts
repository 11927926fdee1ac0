/**
 * A topic with a long history, for the benchmarks that compare the cost of
 * a send with many messages stored against none: one database loaded once
 * (through `sync`, 50 messages a call, as agents would), copied for each
 * benchmark that needs it.
 *
 * @module
 */

import { startPeer, type ToolCaller } from "../tests/_helpers/peer.ts";

/** Where the history is: its topic's name and the seq of its last message. */
export interface History {
  topicName: string;
  lastSeq: number;
}

/** Load `count` messages into the topic "history" of a new database at `path`. */
export async function loadHistory(path: string, count: number): Promise<History> {
  await using loader = await startPeer({ dbPath: path });
  const topic = await loader.ok("topic_create", { name: "history" });
  await loader.ok("topic_join", { agent_name: "historian", topic_id: topic.topic_id });
  let lastSeq = 0;
  for (let n = 0; n < count; n += 50) {
    const outbox = Array.from({ length: Math.min(50, count - n) }, (_, k) => ({
      content_markdown: `history ${n + k}: the build of module ${(n + k) % 97} passed on run ${n}`,
    }));
    const result = await loader.ok("sync", {
      topic_id: topic.topic_id,
      outbox,
      max_items: 1,
      wait_seconds: 0,
    }) as { sent: { message: { seq: number } }[] };
    lastSeq = result.sent.at(-1)!.message.seq;
  }
  // A search brings the full-text index up to date: the history is stored and indexed.
  await loader.ok("messages_search", { query: "build", limit: 1 });
  return { topicName: "history", lastSeq };
}

/** Join `peer` to the history's topic as `name`, reading from its end (not its backlog). */
export async function joinAtEnd(
  peer: ToolCaller,
  topicId: string,
  name: string,
  history?: History,
) {
  await peer.ok("topic_join", { agent_name: name, topic_id: topicId });
  if (history) await peer.ok("cursor_reset", { topic_id: topicId, last_seq: history.lastSeq });
}
