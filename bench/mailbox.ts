/**
 * Mailboxes over HTTP (seed 003): clients, each its own agent, loop over
 * `send_to_agent` to the next agent then `check_mail`, through one
 * `agent-bus http` process, with the SDK's Streamable HTTP client. Every
 * acknowledged message must be popped exactly once (what is left at the
 * end is drained and counted too).
 *
 * @module
 */

import { connectHttp, type HttpClient, startHttpServer } from "../tests/_helpers/http.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** Requests and pops per second, latency, and the exactly-once check. */
export interface MailboxResult {
  clients: number;
  seconds: number;
  requests: number;
  sent: number;
  requestsPerSecond: number;
  popsPerSecond: number;
  latency: Distribution;
  lost: number;
  duplicated: number;
}

type Popped = { message: { id: string } | null };

/** Run `clients` agents doing send + check_mail pairs for `seconds`. */
export async function benchMailbox(
  dir: string,
  options: { clients: number; seconds: number },
): Promise<MailboxResult> {
  await using server = await startHttpServer({ dbPath: `${dir}/mailbox.sqlite` });
  const agents: HttpClient[] = await Promise.all(
    Array.from(
      { length: options.clients },
      (_, i) => connectHttp(`${server.url}/agents/agent-${i}/mcp/`),
    ),
  );
  try {
    const acked = new Set<string>();
    const popped = new Map<string, number>();
    const pop = (result: Popped) => {
      if (result.message) popped.set(result.message.id, (popped.get(result.message.id) ?? 0) + 1);
    };
    const latencies: number[] = [];
    const timed = async (agent: HttpClient, tool: string, args: Record<string, unknown>) => {
      const started = performance.now();
      const result = await agent.ok(tool, args);
      latencies.push(performance.now() - started);
      return result;
    };
    const started = performance.now();
    const deadline = started + options.seconds * 1000;
    let pops = 0;
    await Promise.all(agents.map(async (agent, i) => {
      const to = `agent-${(i + 1) % options.clients}`;
      for (let n = 0; performance.now() < deadline; n++) {
        const id = `a${i}-${n}`;
        await timed(agent, "send_to_agent", {
          name: to,
          msg: `message ${n} from agent ${i}`,
          msg_id: id,
        });
        acked.add(id);
        const result = await timed(agent, "check_mail", {}) as Popped;
        if (result.message) pops++;
        pop(result);
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    // Whatever is still unread must be there exactly once too.
    for (const agent of agents) {
      for (;;) {
        const result = await agent.ok("check_mail") as Popped;
        if (!result.message) break;
        pop(result);
      }
    }
    let lost = 0;
    for (const id of acked) if (!popped.has(id)) lost++;
    return {
      clients: options.clients,
      seconds,
      requests: latencies.length,
      sent: acked.size,
      requestsPerSecond: latencies.length / seconds,
      popsPerSecond: pops / seconds,
      latency: distribution(latencies),
      lost,
      // A message popped twice, or one popped that was never sent, counts as a duplicate.
      duplicated: [...popped].filter(([id, n]) => n > 1 || !acked.has(id)).length,
    };
  } finally {
    await Promise.all(agents.map((agent) => agent.close()));
  }
}
