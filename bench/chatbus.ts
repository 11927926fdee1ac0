/**
 * The chatbus dialect (seed 002) as AgentChatBus's agents use it, in real
 * server processes: the latency from `msg_post` to a `msg_wait` parked in
 * another process, and strict-protocol posting throughput (every post
 * carries `expected_last_seq` and a single-use `reply_token`; a post that
 * lost a race gets `SeqMismatchError`, reads through `msg_wait` and posts
 * again), on a fresh thread and on one that already holds 100,000
 * messages. Every acknowledged post must be stored exactly once.
 *
 * @module
 */

import {
  type ChatAgent,
  connectAgent,
  type LoopTally,
  post,
  strictLoop,
  wait,
} from "../tests/_helpers/chat.ts";
import { type Peer, startPeer, textOf } from "../tests/_helpers/peer.ts";
import { type Distribution, distribution, waitForLog } from "./_stats.ts";

const CHATBUS = ["--profile", "chatbus"];

/** `msg_post` → a `msg_wait` parked in another process, `samples` times. */
export async function benchChatLatency(dir: string, samples: number): Promise<Distribution> {
  const dbPath = `${dir}/chat-latency.sqlite`;
  await using a = await startPeer({ dbPath, args: CHATBUS });
  await using b = await startPeer({ dbPath, args: CHATBUS, env: { AGENT_BUS_LOG_LEVEL: "debug" } });
  const alice = await connectAgent(a, "latency");
  const bob = await connectAgent(b, "latency");
  const warmup = 20;
  const times: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    const waiting = wait(bob, { timeoutMs: 30_000 });
    await waitForLog(b, "msg_wait waiting", i + 1); // Bob is really parked before Alice posts
    const started = performance.now();
    await post(alice, `ping ${i}`);
    const result = await waiting;
    const elapsed = performance.now() - started;
    if (result.messages.length !== 1) throw new Error(`sample ${i}: Bob did not get the post`);
    if (i >= warmup) times.push(elapsed);
  }
  return distribution(times);
}

/** Strict-protocol posting: posts per second, races lost, and the loss check. */
export interface ChatThroughput {
  agents: number;
  stored: number;
  seconds: number;
  posted: number;
  perSecond: number;
  conflicts: number;
  lost: number;
  duplicated: number;
}

/**
 * `agents` agents (one server process each) post to one thread for
 * `seconds`; with `stored`, the thread first receives that many messages.
 */
export async function benchChatThroughput(
  dir: string,
  options: { agents: number; seconds: number; stored: number },
): Promise<ChatThroughput> {
  const dbPath = `${dir}/chat-throughput-${options.agents}-${options.stored}.sqlite`;
  const peers: Peer[] = await Promise.all(
    Array.from({ length: options.agents }, () => startPeer({ dbPath, args: CHATBUS })),
  );
  try {
    const agents: ChatAgent[] = [];
    for (const peer of peers) agents.push(await connectAgent(peer, "throughput"));
    if (options.stored > 0) await fill(dbPath, agents[0]!.threadId, options.stored);
    for (const agent of agents) {
      await wait(agent, { afterSeq: Number.MAX_SAFE_INTEGER, timeoutMs: 0 });
    }
    const acked: string[] = [];
    let conflicts = 0;
    const started = performance.now();
    const deadline = started + options.seconds * 1000;
    await Promise.all(agents.map(async (agent, i) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const result = await agent.caller.call("msg_post", {
          thread_id: agent.threadId,
          author: agent.agentId,
          content: `agent ${i} post ${n}: the quick brown fox jumps over the lazy dog`,
          expected_last_seq: agent.seq,
          reply_token: agent.replyToken,
        });
        const structured = result.structuredContent as Record<string, unknown>;
        if (!result.isError) {
          acked.push(structured.msg_id as string);
          agent.seq = structured.current_seq as number;
          agent.replyToken = structured.reply_token as string;
          continue;
        }
        const code = (structured.error as { code: string }).code;
        if (code !== "SeqMismatchError") throw new Error(textOf(result));
        conflicts++;
        await wait(agent, { timeoutMs: 0 }); // fast return: the missed posts and a fresh token
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    const stored = await storedIds(peers[0]!, agents[0]!.threadId, options.stored);
    const counts = new Map<string, number>();
    for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1);
    return {
      agents: options.agents,
      stored: options.stored,
      seconds,
      posted: acked.length,
      perSecond: acked.length / seconds,
      conflicts,
      lost: acked.filter((id) => !counts.has(id)).length,
      duplicated: [...counts.values()].filter((n) => n > 1).length,
    };
  } finally {
    await Promise.all(peers.map((peer) => peer.close()));
  }
}

/** Put `count` messages into the thread through a v6.3 peer (50 per `sync`). */
async function fill(dbPath: string, threadId: string, count: number): Promise<void> {
  await using filler = await startPeer({ dbPath });
  await filler.ok("topic_join", { agent_name: "history", topic_id: threadId });
  for (let done = 0; done < count; done += 50) {
    const batch = Math.min(50, count - done);
    await filler.ok("sync", {
      topic_id: threadId,
      outbox: Array.from({ length: batch }, (_, k) => ({
        content_markdown: `earlier message ${done + k}: notes from a long design discussion`,
      })),
      max_items: 1,
      wait_seconds: 0,
    });
  }
}

/** Ids of the messages after the first `skip` seqs, read back page by page. */
async function storedIds(peer: Peer, threadId: string, skip: number): Promise<string[]> {
  const ids: string[] = [];
  for (let after = skip;;) {
    const result = await peer.call("msg_list", {
      thread_id: threadId,
      after_seq: after,
      limit: 100,
      return_format: "json",
      include_system_prompt: false,
    });
    const page = JSON.parse(textOf(result)) as { msg_id: string; seq: number }[];
    if (page.length === 0) return ids;
    ids.push(...page.map((m) => m.msg_id));
    after = page.at(-1)!.seq;
  }
}

/**
 * Fair turns: `agents` agents in separate processes race in the strict loop
 * on one thread (each posts at once with its chain token, reads after a
 * refusal) until `posts` posts landed; how they shared them.
 */
export async function benchChatFairness(
  dir: string,
  options: { agents: number; posts: number },
): Promise<LoopTally> {
  const dbPath = `${dir}/chat-fairness-${options.agents}-${crypto.randomUUID()}.sqlite`;
  const peers: Peer[] = await Promise.all(
    Array.from({ length: options.agents }, () => startPeer({ dbPath, args: CHATBUS })),
  );
  try {
    const agents: ChatAgent[] = [];
    for (const peer of peers) agents.push(await connectAgent(peer, "fairness"));
    return await strictLoop(agents, options.posts);
  } finally {
    await Promise.all(peers.map((peer) => peer.close()));
  }
}
