/**
 * Two MCP sessions on one `agent-bus http` node, driven from the node's own
 * host (a network namespace the test process cannot reach): one keeps
 * sending to a topic, the other pings every 100 ms, and the ping times come
 * back. Run as a script on the host (`ip netns exec … deno run`), steered by
 * {@linkcode startNodeSessions} through stdin and stdout: it says `ready`
 * once both sessions have joined and listed their tools, runs on each `go
 * SECONDS`, and prints one JSON line of results per run.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { connectHttp, type HttpClient } from "./http.ts";
import { spawnSteered } from "./steered.ts";

/** What the sessions did meanwhile. */
export interface NodeSessionsResult {
  /** `ping` times of the session that only pinged, ms. */
  pings: number[];
  /** Sends the other session had acknowledged. */
  sent: number;
}

/** The script, running on a host. */
export interface NodeSessions extends AsyncDisposable {
  /** Send and ping for `seconds`, then wait for the last send to end (again on each call). */
  run(seconds: number): Promise<NodeSessionsResult>;
}

/** Start the sessions on the node at `url` (as its host reaches it), sending to `topicId`. */
export async function startNodeSessions(
  url: string,
  topicId: string,
  prefix: string[],
): Promise<NodeSessions> {
  const script = spawnSteered([
    ...prefix,
    Deno.execPath(),
    "run",
    "--allow-all",
    fileURLToPath(import.meta.url),
    url,
    topicId,
  ]);
  if ((await script.next()) !== "ready") throw new Error("the sessions script did not start");
  return {
    async run(seconds) {
      await script.say(`go ${seconds}`);
      return JSON.parse(await script.next()) as NodeSessionsResult;
    },
    [Symbol.asyncDispose]: () => script.close(),
  };
}

function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}

async function main(url: string, topicId: string): Promise<void> {
  await using sender = await connectHttp(`${url}/mcp`);
  await using pinger = await connectHttp(`${url}/mcp`);
  for (const [session, name] of [[sender, "node-sender"], [pinger, "node-pinger"]] as const) {
    await session.client.listTools();
    await session.ok("topic_join", { agent_name: name, topic_id: topicId });
  }
  const input = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  say("ready");
  let said = "";
  for (let round = 0;; round++) {
    while (!said.includes("\n")) {
      const { value, done } = await input.read();
      if (done) return;
      said += value;
    }
    const line = said.slice(0, said.indexOf("\n"));
    said = said.slice(said.indexOf("\n") + 1);
    say(
      JSON.stringify(
        await go(sender, pinger, topicId, round, Number(/^go (\d+)/.exec(line)?.[1] ?? 0)),
      ),
    );
  }
}

/** Send and ping for `seconds`: what {@linkcode NodeSessions.run} returns. */
async function go(
  sender: HttpClient,
  pinger: HttpClient,
  topicId: string,
  round: number,
  seconds: number,
): Promise<NodeSessionsResult> {
  const until = performance.now() + seconds * 1000;
  let sent = 0;
  const sending = (async () => {
    for (let i = 0; performance.now() < until; i++) {
      const result = await sender.call("sync", {
        topic_id: topicId,
        outbox: [{
          content_markdown: `from the node ${round}.${i}`,
          client_message_id: `node-${round}-${i}`,
        }],
        wait_seconds: 0,
      });
      if (!result.isError) sent++;
    }
  })();
  const pings: number[] = [];
  while (performance.now() < until) {
    const started = performance.now();
    await pinger.client.ping({ timeout: 120_000 });
    pings.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await sending;
  return { pings, sent };
}

if (import.meta.main) await main(Deno.args[0]!, Deno.args[1]!);
