/**
 * The chatbus message tools (seed 002, "Messaging" and "Reactions").
 *
 * `msg_list` and `msg_wait` answer in content blocks (a header and a body
 * per message, images as `image` blocks) or, with `return_format: "json"`,
 * in one JSON text block, as AgentChatBus does; they publish no output
 * schema, because a client given `structuredContent` may show the model
 * that instead of the image blocks.
 *
 * @module
 */

import type { ContentBlock } from "../../_sdk.ts";
import { z } from "zod";
import { fitJson, truncatedWarning } from "../../../budget.ts";
import { postMessage } from "../../../bus/chat/post.ts";
import {
  editHistory,
  editMessage,
  getMessage,
  type ListedMessage,
  listMessages,
  MAX_MESSAGES,
  react,
  type SkippedMessages,
  unreact,
} from "../../../bus/chat/read.ts";
import { waitMessages } from "../../../bus/chat/wait.ts";
import {
  agentIdArg,
  chatMessageSchema,
  editedSchema,
  editHistorySchema,
  messageIdArg,
  msgListInput,
  msgPostInput,
  postedSchema,
  reactedSchema,
  reactionInput,
  returnFormatArg,
  threadIdArg,
  tokenArg,
} from "../../../bus/chat/schemas.ts";
import { iso, type SyncContext } from "../../../bus/chat/wire.ts";
import { MAX_QUERY_CHARS } from "../../../search/mod.ts";
import { defineTool } from "../../define_tool.ts";
import { counted } from "../../../strings.ts";
import { jsonResult } from "./json.ts";

/** `msg_post`. */
export const msgPostTool = defineTool({
  name: "msg_post",
  title: "Post message",
  description: (config) =>
    "Post a message to a thread. Strict sync: pass expected_last_seq (the current_seq of your latest sync " +
    "context) and reply_token (single use) from bus_connect, thread_create, msg_wait or your previous " +
    "msg_post. If others posted meanwhile you get SeqMismatchError with the new messages " +
    "(new_messages_1st_read): read them, call msg_wait for a fresh token, then write a new reply. " +
    "Returns {msg_id, seq} and, for a registered author, the next sync context. metadata keys: " +
    "handoff_target (agent id), stop_reason (convergence, timeout, error, complete, impasse), " +
    `attachments ([{type: "image", mimeType, data: base64}], at most 4 of ${config.maxAttachmentBytes} bytes), mentions.`,
  input: msgPostInput,
  output: postedSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus, session }) => jsonResult(await postMessage(bus, session, args)),
});

/** `msg_list`. */
export const msgListTool = defineTool({
  name: "msg_list",
  title: "List messages",
  description:
    "Fetch a thread's messages after after_seq (default 0, which also prepends the thread's system prompt as seq 0). " +
    `Optional limit (default and most ${MAX_MESSAGES}), priority filter, include_system_prompt, include_attachments, return_format.`,
  input: msgListInput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run(args, { bus }) {
    const { messages, has_more } = listMessages(bus, {
      ...args,
      include_attachments: args.include_attachments && args.return_format === "blocks",
    });
    if (args.return_format === "json") {
      const text = JSON.stringify(messages.map(({ message }) => message));
      return { structured: {}, text, blocks: [{ type: "text", text }] };
    }
    const blocks = messages.flatMap((listed) => messageBlocks(listed, args.include_attachments));
    if (has_more) blocks.push(moreBlock(messages));
    return { structured: {}, text: "", blocks };
  },
});

/** `msg_wait`. */
export const msgWaitTool = defineTool({
  name: "msg_wait",
  title: "Wait for messages",
  description:
    "Block until a message arrives in the thread after after_seq; returns at once if some are there, " +
    "or (with no messages) right after a sync error so you get a fresh token. After a lost race it first " +
    "lets agents that lost before you post (500 ms at most), so your next post races for the message " +
    "after theirs. Far behind, it returns the " +
    "newest messages that fit and says how many earlier ones it left out, so you can post at once. Always returns a sync " +
    "context (current_seq, reply_token, reply_window), the first block in blocks format. timeout_ms " +
    "(default 300000) bounds the wait. Pass agent_id and token (both or neither; bus_connect binds " +
    "them to this connection). for_agent: only messages whose metadata.handoff_target is that agent.",
  input: z.object({
    thread_id: threadIdArg,
    after_seq: z.int().min(0, "must be an int >= 0"),
    timeout_ms: z.int().min(0, "must be an int >= 0").max(86_400_000).default(300_000),
    return_format: returnFormatArg,
    agent_id: agentIdArg.optional(),
    token: tokenArg.optional(),
    for_agent: z.string().max(64).optional(),
    include_attachments: z.boolean().default(true),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  textStyle: "json",
  usesDb: true,
  async run(args, { bus, session, signal, progress }) {
    const images = args.include_attachments && args.return_format === "blocks";
    const result = await waitMessages(bus, session, { ...args, include_attachments: images }, {
      signal,
      onWaitProgress: (elapsed, total) =>
        progress(elapsed, total, `waiting for messages (${elapsed}s of ${total}s)`),
    });
    if (args.return_format === "json") {
      const text = JSON.stringify({
        messages: result.messages.map(({ message }) => ({
          msg_id: message.msg_id,
          author: message.author,
          author_id: message.author_id,
          author_name: message.author_name,
          role: message.role,
          content: message.content,
          seq: message.seq,
          created_at: message.created_at,
          metadata: message.metadata === null ? null : JSON.stringify(message.metadata),
          priority: message.priority,
        })),
        ...result.sync,
        ...(result.has_more ? { has_more: true } : {}),
        ...(result.skipped ? { skipped_messages: result.skipped } : {}),
        ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}),
      });
      return { structured: {}, text, blocks: [{ type: "text", text }] };
    }
    const blocks: ContentBlock[] = [syncBlock(result.sync)];
    if (result.skipped) blocks.push(skippedBlock(result.skipped));
    for (const listed of result.messages) {
      blocks.push(...messageBlocks(listed, args.include_attachments));
    }
    if (result.has_more) blocks.push(moreBlock(result.messages));
    // The result has no structuredContent in this dialect: warnings are said in a block.
    for (const warning of result.warnings) {
      blocks.push({ type: "text", text: `warning ${warning.code}: ${warning.message ?? ""}` });
    }
    return { structured: {}, text: "", blocks };
  },
});

/** `msg_get`. */
export const msgGetTool = defineTool({
  name: "msg_get",
  title: "Get message",
  description:
    "Fetch one message by id, with content, author, seq, priority, reply_to_msg_id, metadata and reactions. Returns {found: false} if there is none.",
  input: z.object({ message_id: messageIdArg }),
  output: z.object({ found: z.boolean(), message: chatMessageSchema.nullable() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run: (args, { bus }) => jsonResult(getMessage(bus, args.message_id)),
});

/** `msg_search`. */
export const msgSearchTool = defineTool({
  name: "msg_search",
  title: "Search messages",
  description:
    "Search every message (full-text with stemming and code-aware terms, plus semantic ranking when an " +
    "embedding endpoint is configured). Optional thread_id to search one thread, limit (default 50). " +
    "Returns {results: [{message_id, thread_id, thread_topic, author, seq, created_at, snippet}], total, query}.",
  input: z.object({
    query: z.string().min(1, "must be a non-empty string").max(MAX_QUERY_CHARS),
    thread_id: threadIdArg.optional(),
    limit: z.int().min(1, "must be an int >= 1").max(200).default(50),
  }),
  output: z.object({
    results: z.array(z.object({
      message_id: z.string(),
      thread_id: z.string(),
      thread_topic: z.string(),
      author: z.string(),
      seq: z.int(),
      created_at: z.string(),
      snippet: z.string(),
    })),
    total: z.int(),
    query: z.string(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  async run(args, { search }) {
    const { results, warnings } = await search.search({
      query: args.query,
      mode: "hybrid",
      limit: Math.min(args.limit, 100),
      includeContent: false,
      topicId: args.thread_id,
    });
    return jsonResult({
      results: results.map((hit) => ({
        message_id: hit.message_id,
        thread_id: hit.topic_id,
        thread_topic: hit.topic_name,
        author: hit.sender,
        seq: hit.seq,
        created_at: iso(hit.created_at),
        snippet: hit.snippet,
      })),
      total: results.length,
      query: args.query,
    }, warnings);
  },
});

/** `msg_edit`. */
export const msgEditTool = defineTool({
  name: "msg_edit",
  title: "Edit message",
  description:
    "Replace the content of your own message (agent_id + token, or the connection's agent). Keeps every earlier version (msg_edit_history). Identical content returns {no_change: true}.",
  input: (config) =>
    z.object({
      message_id: messageIdArg,
      new_content: z.string().min(1, "must be a non-empty string").max(config.maxMessageChars),
      agent_id: agentIdArg.optional(),
      token: tokenArg.optional(),
    }),
  output: editedSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus, session }) => jsonResult(await editMessage(bus, session, args)),
});

/** `msg_edit_history`. */
export const msgEditHistoryTool = defineTool({
  name: "msg_edit_history",
  title: "Edit history",
  description:
    "A message's current content and every earlier version, oldest first: [{version, old_content, edited_by, created_at}]. " +
    "A long history comes in pages: has_more with next_after_version to pass as after_version.",
  input: z.object({
    message_id: messageIdArg,
    after_version: z.int().min(0, "must be an int >= 0").default(0).describe(
      "Only edits after this version (paging)",
    ),
  }),
  output: editHistorySchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run(args, { bus }) {
    const history = editHistory(bus, args.message_id);
    const later = history.edits.filter((edit) => edit.version > args.after_version);
    // The current content counts against the budget too.
    const budget = Math.max(0, bus.config.toolResultMaxBytes - history.current_content.length);
    const { items: edits, cut } = fitJson(later, budget);
    const page = { ...history, edits };
    return jsonResult(
      cut ? { ...page, has_more: true, next_after_version: edits.at(-1)!.version } : page,
      cut
        ? [
          truncatedWarning(
            later.length - edits.length,
            bus.config.toolResultMaxBytes,
            "page on with after_version=next_after_version",
          ),
        ]
        : [],
    );
  },
});

/** `msg_react`. */
export const msgReactTool = defineTool({
  name: "msg_react",
  title: "React",
  description:
    "Add a reaction (any short label or emoji) to a message, as this connection's agent (or agent_id with its token). Idempotent: the same (message, agent, reaction) again returns the existing one. At most 100 reactions per message.",
  input: reactionInput,
  output: reactedSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus, session }) => jsonResult(await react(bus, session, args)),
});

/** `msg_unreact`. */
export const msgUnreactTool = defineTool({
  name: "msg_unreact",
  title: "Remove reaction",
  description: "Remove a reaction from a message; removed=false if it was not there.",
  input: reactionInput,
  output: z.object({ removed: z.boolean(), message_id: z.string(), reaction: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  textStyle: "json",
  usesDb: true,
  run: async (args, { bus, session }) => jsonResult(await unreact(bus, session, args)),
});

/** A message as blocks: `[seq] author (role) time`, the body, then its images. */
function messageBlocks(listed: ListedMessage, withImages: boolean): ContentBlock[] {
  const { message } = listed;
  const blocks: ContentBlock[] = [{
    type: "text",
    text: `[${message.seq}] ${message.author_name} (${message.role}) ${message.created_at}`,
  }];
  if (message.content) blocks.push({ type: "text", text: message.content });
  if (withImages) blocks.push(...listed.attachments);
  return blocks;
}

function syncBlock(sync: SyncContext): ContentBlock {
  return { type: "text", text: JSON.stringify({ type: "sync_context", ...sync }) };
}

/** The line that says which earlier messages a catching-up read left out, and how to read them. */
function skippedText(skipped: SkippedMessages): string {
  return `[${
    counted(skipped.count, "earlier message")
  }, seq ${skipped.from_seq}-${skipped.through_seq}, ` +
    `not shown to keep this result small; the newest follow and the sync context is current. ` +
    `Page the earlier ones with ${skipped.page_with}]`;
}

function skippedBlock(skipped: SkippedMessages): ContentBlock {
  return { type: "text", text: skippedText(skipped) };
}

function moreBlock(messages: readonly ListedMessage[]): ContentBlock {
  const last = messages.at(-1)?.message.seq ?? 0;
  return {
    type: "text",
    text: `[more messages after seq ${last}: call again with after_seq=${last}]`,
  };
}
