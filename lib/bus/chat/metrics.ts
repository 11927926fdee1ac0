/**
 * AgentChatBus's metrics over the bus (`GET /api/metrics`): threads by
 * status, message totals, rates and stop reasons, the mean gap between
 * messages in active threads, and agents online.
 *
 * @module
 */

import { chatCounts } from "../../store/chat/mod.ts";
import type { Bus } from "../mod.ts";
import { ONLINE_WINDOW_SECONDS } from "./agents.ts";

/** The metrics, counted in one read. */
export function chatMetrics(bus: Bus) {
  const now = bus.now();
  const counts = bus.store.read(() =>
    chatCounts(bus.store, {
      since: [now - 60, now - 300, now - 900],
      activeSince: now - 900,
      onlineSince: now - ONLINE_WINDOW_SECONDS,
      now,
    })
  );
  const total = Object.values(counts.threadsByStatus).reduce((sum, n) => sum + n, 0);
  const [last1m, last5m, last15m] = counts.messagesSince;
  return {
    threads: { total, by_status: counts.threadsByStatus },
    messages: {
      total: counts.messages,
      rate: { last_1m: last1m, last_5m: last5m, last_15m: last15m },
      avg_latency_ms: counts.meanGap === null ? null : Math.round(counts.meanGap * 10_000) / 10,
      stop_reasons: counts.stopReasons,
    },
    agents: { total: counts.agents, online: counts.agentsOnline },
  };
}
