/**
 * Throughput: several sending processes call `sync` as fast as they can,
 * while a reader process per topic drains it. Every acknowledged message
 * must reach its reader exactly once. Senders are spread over `topics`
 * topics (one by default), round-robin.
 *
 * @module
 */

import { startPeer, type ToolCaller } from "../tests/_helpers/peer.ts";
import { type History, joinAtEnd } from "./_history.ts";

/** Messages per second, and the loss check. */
/** An agent the benchmarks call tools as: a server process, an entry, a client by URL. */
export type Agent = ToolCaller & { close(): Promise<void> };

export interface ThroughputResult {
  senders: number;
  topics: number;
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
    /** Topics the senders are spread over (default 1). */
    topics?: number;
    dbPath?: string;
    /** A database already holding this topic's history (see `_history.ts`). */
    history?: History;
    /**
     * Every agent attaches to the resident bus (senders and readers alike
     * with the readers' setting: a bus serves entries of its own settings).
     */
    resident?: boolean;
    /**
     * How an agent attaches (default: a server process of its own or an
     * entry on the resident bus, started with `env`).
     */
    open?: (env: Record<string, string>) => Promise<Agent>;
  },
): Promise<ThroughputResult> {
  const dbPath = options.dbPath ?? `${dir}/throughput-${options.senders}-${options.perCall}.sqlite`;
  const { resident } = options;
  const readerEnv = { AGENT_BUS_MAX_SYNC_ITEMS: "1000" };
  const open = options.open ?? ((env) => startPeer({ dbPath, resident, env }));
  const senders = await Promise.all(
    Array.from({ length: options.senders }, () => open(resident ? readerEnv : {})),
  );
  const topicCount = options.topics ?? 1;
  const readers = await Promise.all(
    Array.from({ length: topicCount }, () => open(readerEnv)),
  );
  try {
    const { history } = options;
    const topicIds: string[] = [];
    for (const [t, reader] of readers.entries()) {
      const name = t === 0 ? history?.topicName ?? "throughput" : `throughput-${t}`;
      const topic = await reader.ok("topic_create", { name });
      topicIds.push(topic.topic_id as string);
      await joinAtEnd(reader, topic.topic_id as string, "reader", history);
    }
    const topicOf = (i: number) => topicIds[i % topicCount]!;
    await Promise.all(senders.map((s, i) => joinAtEnd(s, topicOf(i), `sender-${i}`, history)));
    let sending = true;
    const acked = new Set<string>();
    const received = new Map<string, number>();
    const read = Promise.all(readers.map(async (reader, t) => {
      while (sending || received.size < acked.size) {
        const result = await reader.call("sync", {
          topic_id: topicIds[t],
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
    }));
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
          topic_id: topicOf(i),
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
      topics: topicCount,
      perCall: options.perCall,
      seconds: elapsed,
      sent: acked.size,
      perSecond: acked.size / elapsed,
      lost,
      duplicated,
    };
  } finally {
    await Promise.all([...senders, ...readers].map((s) => s.close()));
  }
}
