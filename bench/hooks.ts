/**
 * The clients' hooks: how long one `agent-bus hook` run takes, spawned
 * through `sh -c` by a client process as Claude Code and Gemini CLI do
 * (measured by that process, from spawn to exit), and how soon an on-call
 * stop hook lets the agent continue after a message arrives. With
 * `resident`, the agents' servers are entries of the resident bus, which
 * answers the hooks.
 *
 * @module
 */

import { STOP_REASON_HEADER } from "../lib/transports/hook/reason.ts";
import { hookShell, startFakeClient } from "../tests/_helpers/hook.ts";
import { startPeer } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** Hook run times, and the on-call wake-up. */
export interface HooksResult {
  /** Who answered the hooks: the hook's own process over the database, or the resident bus. */
  mode: "standalone" | "resident";
  /** `UserPromptSubmit` with one unread topic: a read and a line of context. */
  prompt: Distribution;
  /** `Stop` with a new message each time: a read, a write, a block (Claude Code's). */
  stop: Distribution;
  /** Each client's stop hook as installed, blocking each time (Codex `Stop`, Gemini `AfterAgent`). */
  stops: { client: string; event: string; times: Distribution }[];
  /** Gemini's `BeforeAgent` run again on the resumed turn with the deny's reason: answered unopened. */
  resumed: Distribution;
  /** `Stop --wait`: from a message's commit to the hook's exit with the block. */
  wake: Distribution;
}

/** Run the prompt and stop hooks `runs` times each, and the on-call wake `wakes` times. */
export async function benchHooks(
  dir: string,
  runs: number,
  wakes: number,
  resident = false,
): Promise<HooksResult> {
  const db = `${dir}/hooks-${resident ? "resident" : "standalone"}.sqlite`;
  await using agent = await startFakeClient(db, {
    cwd: dir,
    topic: "hooks",
    agent: "claude",
    resident,
  });
  await using other = await startPeer({ dbPath: db, resident });
  await other.ok("topic_join", { agent_name: "codex", topic_id: agent.topicId });
  const send = (text: string) =>
    other.ok("sync", {
      topic_id: agent.topicId,
      outbox: [{ content_markdown: text }],
      wait_seconds: 0,
    });
  await send("one unread message");
  const input = (session: string, active: boolean) => ({
    session_id: session,
    cwd: dir,
    stop_hook_active: active,
  });
  const time = async (command: string, body: Record<string, unknown>, expect: string) => {
    const result = await agent.hook(command, body);
    if (!JSON.stringify(result.out).includes(expect)) {
      throw new Error(`unexpected hook answer: ${JSON.stringify(result.out)} ${result.stderr}`);
    }
    return result.ms!;
  };

  const onPrompt = hookShell(db, { client: "claude-code", event: "UserPromptSubmit" });
  await time(onPrompt, input("warm-up", false), "additionalContext"); // fills Deno's code cache
  const prompt: number[] = [];
  for (let i = 0; i < runs; i++) {
    prompt.push(await time(onPrompt, input("p", false), "additionalContext"));
  }

  const onStop = hookShell(db, { client: "claude-code", event: "Stop", maxBlocks: 1000 });
  const stop: number[] = [];
  for (let i = 0; i < runs; i++) {
    await send(`message ${i}`);
    stop.push(await time(onStop, input("s", true), "block"));
  }

  const stops = [{ client: "claude-code", event: "Stop", times: distribution(stop) }];
  for (const [client, event] of [["codex", "Stop"], ["gemini", "AfterAgent"]] as const) {
    const command = hookShell(db, { client, event, maxBlocks: 1000 });
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      await send(`message for ${client} ${i}`);
      times.push(await time(command, input(client, true), client === "gemini" ? "deny" : "block"));
    }
    stops.push({ client, event, times: distribution(times) });
  }
  const onResume = hookShell(db, { client: "gemini", event: "BeforeAgent" });
  const resumed: number[] = [];
  for (let i = 0; i < runs; i++) {
    const result = await agent.hook(onResume, {
      ...input("r", false),
      prompt: `${STOP_REASON_HEADER}\n- Topic "hooks"…`,
    });
    if (JSON.stringify(result.out) !== "{}") throw new Error("the resumed turn got the news again");
    resumed.push(result.ms!);
  }

  const onCall = hookShell(db, { client: "claude-code", event: "Stop", wait: 30 });
  const wake: number[] = [];
  for (let i = 0; i < wakes; i++) {
    // The agent reads everything, so the hook finds nothing unread and waits.
    const read = () => agent.tool("sync", { topic_id: agent.topicId, wait_seconds: 0 });
    while ((await read()).has_more) { /* read on */ }
    const waiting = agent.hook(onCall, input(`w${i}`, false));
    // The message comes a moment later.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const sent = performance.now();
    await send(`on call ${i}`);
    const result = await waiting;
    if (result.out.decision !== "block") throw new Error("the on-call hook did not block");
    wake.push(performance.now() - sent);
  }
  return {
    mode: resident ? "resident" : "standalone",
    prompt: distribution(prompt),
    stop: distribution(stop),
    stops,
    resumed: distribution(resumed),
    wake: distribution(wake),
  };
}
