/**
 * zod schemas of the contract's objects, shared by every surface that
 * accepts or returns them (MCP tools now, the REST API later).
 *
 * Limits that come from the config are built into the schemas so that the
 * published JSON Schema states them; the bus functions check them again.
 *
 * @module
 */

import { z } from "zod";
import type { ResolvedConfig } from "../config.ts";
import { MAX_AGENT_NAME_CHARS, MAX_TOKEN_CHARS } from "./names.ts";
import { MAX_MESSAGE_ID_CHARS } from "./append.ts";
import { MAX_CLIENT_MESSAGE_ID_CHARS, MAX_MESSAGE_TYPE_CHARS } from "./sync.ts";
import { MAX_CLOSE_REASON_CHARS, MAX_TOPIC_LIST, MAX_TOPIC_NAME_CHARS } from "./topics.ts";

/** Longest topic id accepted. */
export const MAX_TOPIC_ID_CHARS = 64;

/** A topic id argument. */
export const topicIdArg = z.string().min(1, "must be a non-empty string").max(
  MAX_TOPIC_ID_CHARS,
  `exceeds max length (${MAX_TOPIC_ID_CHARS})`,
);

/** A topic name argument. */
export const topicNameArg = z.string().max(
  MAX_TOPIC_NAME_CHARS,
  `exceeds max length (${MAX_TOPIC_NAME_CHARS})`,
);

/** An agent name argument. */
export const agentNameArg = z.string().max(
  MAX_AGENT_NAME_CHARS,
  `exceeds max length (${MAX_AGENT_NAME_CHARS})`,
);

/** A reclaim token argument. */
export const reclaimTokenArg = z.string().max(
  MAX_TOKEN_CHARS,
  `exceeds max length (${MAX_TOKEN_CHARS})`,
);

/** A JSON object argument (`metadata`). */
export const jsonObjectArg = z.record(z.string(), z.unknown());

/** One outbox item (seed 4.3, "OutgoingMessage object"). */
export function outgoingMessageSchema(config: ResolvedConfig) {
  return z.strictObject({
    content_markdown: z.string()
      .max(config.maxMessageChars, `exceeds max length (${config.maxMessageChars})`)
      .describe("Message body in Markdown (required; the field is content_markdown, not content)"),
    message_type: z.string()
      .max(MAX_MESSAGE_TYPE_CHARS, `exceeds max length (${MAX_MESSAGE_TYPE_CHARS})`)
      .optional()
      .describe(
        'Free-form type; use "question" for things to answer and "answer" for replies. Default "message"',
      ),
    reply_to: z.string()
      .max(MAX_MESSAGE_ID_CHARS, `exceeds max length (${MAX_MESSAGE_ID_CHARS})`)
      .nullish()
      .describe("message_id (in the same topic) this message answers"),
    metadata: jsonObjectArg.nullish().describe("Optional JSON object stored with the message"),
    client_message_id: z.string()
      .max(MAX_CLIENT_MESSAGE_ID_CHARS, `exceeds max length (${MAX_CLIENT_MESSAGE_ID_CHARS})`)
      .nullish()
      .describe(
        "Idempotency key: resending with the same key returns the stored message (duplicate=true) instead of a copy",
      ),
  });
}

/**
 * The outbox: a list of items. Also accepts what clients actually send: a
 * JSON string of that list, or a single item object.
 */
export function outboxSchema(config: ResolvedConfig) {
  return z.preprocess(
    (value, ctx) => {
      if (typeof value === "string") {
        try {
          return JSON.parse(value);
        } catch {
          ctx.issues.push({
            code: "custom",
            input: value,
            message:
              "must be a list of objects; a string was passed that is not valid JSON (send an array of {content_markdown, ...})",
          });
          return z.NEVER;
        }
      }
      return value !== null && typeof value === "object" && !Array.isArray(value) ? [value] : value;
    },
    z.array(outgoingMessageSchema(config)).max(
      config.maxOutbox,
      `has more than ${config.maxOutbox} items`,
    ),
  );
}

/** A message as returned in `received` and `sent[].message`. */
export const messageSchema = z.object({
  message_id: z.string(),
  topic_id: z.string(),
  seq: z.number().int(),
  sender: z.string(),
  message_type: z.string(),
  reply_to: z.string().nullable(),
  content_markdown: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  client_message_id: z.string().nullable(),
  created_at: z.number(),
});

/** A topic as returned by `topic_list`. */
export const topicSchema = z.object({
  topic_id: z.string(),
  name: z.string(),
  status: z.enum(["open", "closed"]),
  created_at: z.number(),
  closed_at: z.number().nullable(),
  close_reason: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
});

/**
 * The arguments of opening a topic: the `topic_create` tool and the REST
 * route `POST /api/topics` (one schema, so both refuse the same input).
 */
export const topicCreateInput = z.strictObject({
  name: topicNameArg.nullish().describe("Human-friendly name, e.g. the project or task"),
  metadata: jsonObjectArg.nullish().describe("Optional JSON object stored with the topic"),
  mode: z.enum(["reuse", "new"]).default("reuse").describe(
    "reuse: return the newest open topic with this name if any; new: always create",
  ),
});

/** Why a topic is closed: `topic_close` and `POST /api/topics/{id}/close`. */
export const closeReasonArg = z.string()
  .max(MAX_CLOSE_REASON_CHARS, `exceeds max length (${MAX_CLOSE_REASON_CHARS})`)
  .nullish().describe("Why the topic is closed (optional)");

/** Which topics to list: `topic_list` and `GET /api/topics`. */
export const topicListInput = z.strictObject({
  status: z.enum(["open", "closed", "all"]).default("open"),
  limit: z.int().min(1, "must be an int > 0").max(MAX_TOPIC_LIST, `must be <= ${MAX_TOPIC_LIST}`)
    .default(200).describe("Most topics to return"),
  cursor: z.string().max(300).optional().describe(
    "The next_cursor of an earlier topic_list call: the topics after those it listed",
  ),
});
