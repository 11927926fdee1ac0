/**
 * `sync`: the one read/write tool of peer dialog (seed section 4.3).
 *
 * @module
 */

import { z } from "zod";
import { messageSchema, outboxSchema, topicIdArg } from "../../bus/schemas.ts";
import { sync } from "../../bus/sync.ts";
import type { ResolvedConfig } from "../../config.ts";
import { defineTool } from "../define_tool.ts";
import { renderMessage } from "../text.ts";

/** The seed's default wait, capped by the configured maximum. */
function defaultWait(config: ResolvedConfig): number {
  return Math.min(60, config.maxWaitSeconds);
}

/** The `sync` tool. */
export const syncTool = defineTool({
  name: "sync",
  title: "Sync messages",
  description: (config) =>
    "Send and receive messages on a topic you joined, in one call. outbox: messages to send " +
    "(each needs content_markdown; set message_type='question' for things to answer, and " +
    "message_type='answer' with reply_to=<message_id> to answer). Returns new messages from " +
    "other peers in `received`, oldest first, and advances your cursor past them. If nothing " +
    `is new, waits up to wait_seconds (default ${defaultWait(config)}; 0 = return at once) ` +
    "for a message to arrive. Keep max_items small and call again while has_more=true. " +
    "Use client_message_id to make retries safe.",
  input: (config: ResolvedConfig) =>
    z.strictObject({
      topic_id: topicIdArg,
      outbox: outboxSchema(config).optional().describe(
        `Messages to send (at most ${config.maxOutbox})`,
      ),
      max_items: z.int()
        .min(1, "must be an int >= 1")
        .max(config.maxSyncItems, `must be <= ${config.maxSyncItems}`)
        .default(Math.min(20, config.maxSyncItems))
        .describe(
          `Most messages to receive (1..${config.maxSyncItems}); loop while has_more=true`,
        ),
      include_self: z.boolean().default(false).describe("Also receive your own messages"),
      wait_seconds: z.int().min(0, "must be an int >= 0").max(86_400, "must be <= 86400")
        .default(defaultWait(config))
        .describe(
          `Seconds to wait for a message when none is new (0 = no wait; at most ${config.maxWaitSeconds})`,
        ),
      auto_advance: z.boolean().default(true).describe(
        "Advance your cursor past the received messages (false: acknowledge with ack_through)",
      ),
      ack_through: z.int().min(0, "must be an int >= 0").nullish().describe(
        "With auto_advance=false: mark messages up to this seq as read",
      ),
    }),
  output: z.object({
    topic_id: z.string(),
    agent_name: z.string(),
    status: z.enum(["ready", "timeout", "empty"]),
    cursor: z.object({ last_seq: z.int(), updated_at: z.number() }),
    sent: z.array(z.object({ message: messageSchema, duplicate: z.boolean() })),
    received: z.array(messageSchema),
    received_count: z.int(),
    has_more: z.boolean(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  usesDb: true,
  async run(args, { bus, session, signal, progress }) {
    const identity = session.require(args.topic_id);
    const { warnings, ...result } = await sync(bus, identity, {
      topicId: args.topic_id,
      outbox: args.outbox ?? [],
      maxItems: args.max_items,
      includeSelf: args.include_self,
      waitSeconds: args.wait_seconds,
      autoAdvance: args.auto_advance,
      ackThrough: args.ack_through ?? undefined,
    }, {
      signal,
      onWaitProgress: (elapsed, total) =>
        progress(elapsed, total, `waiting for messages (${elapsed}s of ${total}s)`),
    });
    const head = `Sync: status=${result.status} received=${result.received_count} ` +
      `sent=${result.sent.length} cursor=${result.cursor.last_seq} has_more=${result.has_more}`;
    const sentLines = result.sent.map(({ message, duplicate }) =>
      `sent [${message.seq}] id=${message.message_id}${
        duplicate ? " (duplicate, already stored)" : ""
      }`
    );
    // Whole bodies: the bus kept the batch within the result budget, and the cursor has moved
    // past every message here, so none may be cut.
    const received = result.received.map((message) =>
      renderMessage(message, { includeBody: bus.config.toolTextIncludeBodies })
    );
    return {
      structured: result,
      text: [[head, ...sentLines].join("\n"), ...received].join("\n\n"),
      warnings,
    };
  },
});
