/**
 * Web console live events: an agent posts through its MCP server (one
 * process); the `agent-bus http` server (another process, woken by the
 * change feed) pushes it on `/api/events`. Measured from the agent's `sync`
 * call to the event arriving at an SSE reader.
 *
 * @module
 */

import { startHttpServer } from "../tests/_helpers/http.ts";
import { startPeer } from "../tests/_helpers/peer.ts";
import { openEvents } from "../tests/_helpers/sse.ts";
import { timeDeliveries } from "./_delivery.ts";
import type { Distribution } from "./_stats.ts";

/** Post `samples` messages one at a time and time each until its event arrives. */
export async function benchConsoleEvents(dir: string, samples: number): Promise<Distribution> {
  const dbPath = `${dir}/console.sqlite`;
  await using server = await startHttpServer({ dbPath });
  await using agent = await startPeer({ dbPath });
  const { topic_id } = await agent.ok("topic_create", { name: "watched" });
  await agent.ok("topic_join", { agent_name: "agent", topic_id });
  await using events = await openEvents(`${server.url}/api/events?topic_id=${topic_id}`);
  await events.next((e) => e.event === "ready");
  return await timeDeliveries(agent, String(topic_id), samples, async () => {
    const event = await events.next((e) => e.event === "message");
    return (event.data as { message: { content_markdown: string } }).message.content_markdown;
  });
}
