/**
 * Helpers for chatbus (seed 002) tests: connect an agent, post under the
 * sync protocol (through a client, or in process on a bus), and read
 * `msg_wait`'s content blocks back.
 *
 * @module
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { busConnect } from "../../lib/bus/chat/connect.ts";
import { postMessage, type PostResult } from "../../lib/bus/chat/post.ts";
import type { Bus } from "../../lib/bus/mod.ts";
import { Session } from "../../lib/bus/session.ts";
import type { ToolCaller } from "./peer.ts";

/**
 * An agent connected in process to `threadName` on `bus`, whose `post`
 * sends under the sync protocol with the context its previous post (or the
 * connect) returned.
 */
export async function connectPoster(bus: Bus, threadName: string) {
  const session = new Session();
  const connected = await busConnect(bus, session, {
    thread_name: threadName,
    ide: "t",
    model: "m",
  });
  let context = { seq: connected.current_seq, token: connected.reply_token };
  return {
    session,
    connected,
    /** The thread's seq the next post expects. */
    get seq(): number {
      return context.seq;
    },
    async post(content: string): Promise<PostResult> {
      const posted = await postMessage(bus, session, {
        thread_id: connected.thread.thread_id,
        author: connected.agent.agent_id,
        content,
        expected_last_seq: context.seq,
        reply_token: context.token,
      });
      context = { seq: posted.current_seq!, token: posted.reply_token! };
      return posted;
    },
  };
}

/** An agent connected to a thread, with its latest sync context. */
export interface ChatAgent {
  caller: ToolCaller;
  agentId: string;
  token: string;
  threadId: string;
  seq: number;
  replyToken: string;
}

/** `bus_connect` to `threadName` and keep the identity and sync context. */
export async function connectAgent(
  caller: ToolCaller,
  threadName: string,
  extra: Record<string, unknown> = {},
): Promise<ChatAgent & { result: Record<string, unknown> }> {
  const result = await caller.ok("bus_connect", {
    thread_name: threadName,
    ide: "Test",
    model: "m",
    ...extra,
  });
  const agent = result.agent as { agent_id: string; token: string };
  const thread = result.thread as { thread_id: string };
  return {
    caller,
    agentId: agent.agent_id,
    token: agent.token,
    threadId: thread.thread_id,
    seq: result.current_seq as number,
    replyToken: result.reply_token as string,
    result,
  };
}

/** Post as `agent` with its sync context, and keep the chained one. */
export async function post(
  agent: ChatAgent,
  content: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = await agent.caller.ok("msg_post", {
    thread_id: agent.threadId,
    author: agent.agentId,
    content,
    expected_last_seq: agent.seq,
    reply_token: agent.replyToken,
    ...extra,
  });
  agent.seq = result.current_seq as number;
  agent.replyToken = result.reply_token as string;
  return result;
}

/** A message as `msg_wait`'s blocks show it. */
export interface WaitedMessage {
  header: string;
  seq: number;
  content: string;
  images: { data: string; mimeType: string }[];
}

/** `msg_wait`'s blocks, unpacked. */
export interface Waited {
  sync: { current_seq: number; reply_token: string };
  messages: WaitedMessage[];
  /** The line saying which earlier messages a catching-up read left out, if any. */
  skippedText?: string;
  raw: CallToolResult;
}

/** Call `msg_wait` as `agent` (after its current seq unless `afterSeq`) and keep the new context. */
export async function wait(
  agent: ChatAgent,
  options: { afterSeq?: number; timeoutMs?: number; extra?: Record<string, unknown> } = {},
): Promise<Waited> {
  const raw = await agent.caller.call("msg_wait", {
    thread_id: agent.threadId,
    after_seq: options.afterSeq ?? agent.seq,
    timeout_ms: options.timeoutMs ?? 5000,
    agent_id: agent.agentId,
    token: agent.token,
    ...options.extra,
  });
  const waited = unpackBlocks(raw);
  agent.seq = waited.sync.current_seq;
  agent.replyToken = waited.sync.reply_token;
  return waited;
}

/** Read a blocks-format result: the sync context first, then header/body/image blocks per message. */
export function unpackBlocks(raw: CallToolResult): Waited {
  if (raw.isError) throw new Error(`msg_wait failed: ${JSON.stringify(raw.content)}`);
  const blocks = raw.content as { type: string; text?: string; data?: string; mimeType?: string }[];
  const sync = JSON.parse(blocks[0]!.text!) as Waited["sync"];
  const messages: WaitedMessage[] = [];
  let skippedText: string | undefined;
  for (const block of blocks.slice(1)) {
    const header = block.type === "text" ? /^\[(\d+)\] /.exec(block.text!) : null;
    if (messages.length === 0 && /^\[\d+ earlier messages?, seq /.test(block.text ?? "")) {
      skippedText = block.text;
    } else if (header) {
      messages.push({ header: block.text!, seq: Number(header[1]), content: "", images: [] });
    } else if (block.type === "image") {
      messages.at(-1)!.images.push({ data: block.data!, mimeType: block.mimeType! });
    } else if (messages.length > 0) {
      messages.at(-1)!.content = block.text!;
    }
  }
  return { sync, messages, skippedText, raw };
}

/** What {@linkcode strictLoop} measured: posts and refusals per agent. */
export interface LoopTally {
  posts: number[];
  refusals: number[];
  /** The longest run of refusals any one agent met. */
  maxRefusalsInARow: number;
  seconds: number;
}

/**
 * The strict loop of chatbus agents racing in one thread until `total` posts
 * landed: each agent posts at once with the chain token of its last post,
 * and after a refusal reads (`msg_wait`) before posting again.
 */
export async function strictLoop(agents: ChatAgent[], total: number): Promise<LoopTally> {
  const posts = agents.map(() => 0);
  const refusals = agents.map(() => 0);
  const runs = agents.map(() => 0);
  let landed = 0;
  let maxRefusalsInARow = 0;
  const started = performance.now();
  await Promise.all(agents.map(async (agent, i) => {
    let read = true;
    while (landed < total) {
      if (read) await wait(agent, { timeoutMs: 50 });
      if (landed >= total) break;
      const result = await agent.caller.call("msg_post", {
        thread_id: agent.threadId,
        author: agent.agentId,
        content: `agent ${i}, post ${posts[i]}`,
        expected_last_seq: agent.seq,
        reply_token: agent.replyToken,
      });
      if (result.isError) {
        refusals[i]!++;
        maxRefusalsInARow = Math.max(maxRefusalsInARow, ++runs[i]!);
        read = true;
        continue;
      }
      const chain = result.structuredContent as { current_seq: number; reply_token: string };
      agent.seq = chain.current_seq;
      agent.replyToken = chain.reply_token;
      runs[i] = 0;
      posts[i]!++;
      landed++;
      read = false;
    }
  }));
  return { posts, refusals, maxRefusalsInARow, seconds: (performance.now() - started) / 1000 };
}
