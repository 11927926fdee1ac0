/**
 * Throughput: several sending processes call `sync` with one message each
 * as fast as they can, while a reader process drains the topic. Every
 * acknowledged message must reach the reader exactly once.
 *
 * @module
 */

import { type Peer, startPeer } from "../tests/_helpers/peer.ts";
import { type History, joinAtEnd } from "./_history.ts";

/** Messages per second, and the loss check. */
export interface ThroughputResult {
  senders: number;
  perCall: number;
  seconds: number;
  sent: number;
  perSecond: number;
  lost: number;
  duplicated: number;
}

/**
 * Run `senders` senders for `seconds`, each sync carrying `perCall` messages.
 * Senders read with `max_items=1` so their own traffic is mostly sending;
 * the reader reads 1000 at a time.
 */
export async function benchThroughput(
  dir: string,
  options: {
    senders: number;
    seconds: number;
    perCall: number;
    dbPath?: string;
    /** A database already holding this topic's history (see `_history.ts`). */
    history?: History;
  },
): Promise<ThroughputResult> {
  const dbPath = options.dbPath ?? `${dir}/throughput-${options.senders}-${options.perCall}.sqlite`;
  const senders: Peer[] = await Promise.all(
    Array.from({ length: options.senders }, () => startPeer({ dbPath })),
  );
  await using reader = await startPeer({ dbPath, env: { AGENT_BUS_MAX_SYNC_ITEMS: "1000" } });
  try {
    const { history } = options;
    const topic = await reader.ok("topic_create", { name: history?.topicName ?? "throughput" });
    const topicId = topic.topic_id as string;
    await joinAtEnd(reader, topicId, "reader", history);
    await Promise.all(senders.map((s, i) => joinAtEnd(s, topicId, `sender-${i}`, history)));
    let sending = true;
    const acked = new Set<string>();
    const received = new Map<string, number>();
    const read = (async () => {
      while (sending || received.size < acked.size) {
        const result = await reader.call("sync", {
          topic_id: topicId,
          max_items: 1000,
          wait_seconds: 1,
        });
        for (
          const m of (result.structuredContent as { received: { client_message_id: string }[] })
            .received
        ) {
          received.set(m.client_message_id, (received.get(m.client_message_id) ?? 0) + 1);
        }
        if (!sending && (result.structuredContent as { status: string }).status === "timeout") {
          break;
        }
      }
    })();
    const started = performance.now();
    const deadline = started + options.seconds * 1000;
    await Promise.all(senders.map(async (sender, i) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const outbox = Array.from({ length: options.perCall }, (_, k) => ({
          content_markdown:
            `sender ${i} message ${n}.${k}: the quick brown fox jumps over the lazy dog`,
          client_message_id: `s${i}-${n}-${k}`,
        }));
        const result = await sender.call("sync", {
          topic_id: topicId,
          outbox,
          max_items: 1,
          wait_seconds: 0,
        });
        if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
        for (const m of outbox) acked.add(m.client_message_id);
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    sending = false;
    await read;
    let lost = 0;
    for (const id of acked) if (!received.has(id)) lost++;
    const duplicated = [...received.values()].filter((n) => n > 1).length;
    return {
      senders: options.senders,
      perCall: options.perCall,
      seconds: elapsed,
      sent: acked.size,
      perSecond: acked.size / elapsed,
      lost,
      duplicated,
    };
  } finally {
    await Promise.all(senders.map((s) => s.close()));
  }
}
