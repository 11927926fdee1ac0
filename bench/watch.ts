/**
 * `agent-bus watch` latency: an agent posts through its MCP server; the
 * watch process (another process, woken by the change feed) prints it.
 * Measured from the agent's `sync` call to the line on the watch's stdout.
 *
 * @module
 */

import { MAIN, startPeer } from "../tests/_helpers/peer.ts";
import { timeDeliveries } from "./_delivery.ts";
import type { Distribution } from "./_stats.ts";

/** Post `samples` messages one at a time and time each until `watch` prints it. */
export async function benchWatch(dir: string, samples: number): Promise<Distribution> {
  const dbPath = `${dir}/watch.sqlite`;
  await using agent = await startPeer({ dbPath });
  const { topic_id } = await agent.ok("topic_create", { name: "watched" });
  await agent.ok("topic_join", { agent_name: "agent", topic_id });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-all",
      MAIN,
      "watch",
      String(topic_id),
      "--last",
      "0",
      "--json",
    ],
    env: { AGENT_BUS_DB: dbPath, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // The watch says on stderr when it follows; only then is a new message sure to be shown.
  const notices = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  for (let seen = ""; !seen.includes("Watching");) {
    const { value, done } = await notices.read();
    if (done) throw new Error("watch exited before following");
    seen += value;
  }
  notices.releaseLock();
  void child.stderr.cancel().catch(() => {});
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const cut = buffered.indexOf("\n");
      if (cut !== -1) {
        const line = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 1);
        return line;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error("watch exited");
      buffered += value;
    }
  };
  try {
    return await timeDeliveries(agent, String(topic_id), samples, async () => {
      return (JSON.parse(await nextLine()) as { content_markdown: string }).content_markdown;
    });
  } finally {
    child.kill("SIGINT");
    await child.status;
    await lines.cancel().catch(() => {});
  }
}
