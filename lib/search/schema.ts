/**
 * The one description of a search: the arguments of the `messages_search`
 * tool and of the REST route `GET /api/search`, validated by the same
 * schema (and the OpenAPI parameters generated from it).
 *
 * @module
 */

import { z } from "zod";
import { invalidArgument } from "../errors.ts";
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, type SearchArgs } from "./mod.ts";

/** A point in time: unix seconds, or an ISO 8601 date. */
const timeArg = z.union([z.number(), z.string().max(64, "exceeds max length (64)")]);

/** Longest topic id accepted (as in the bus). */
const MAX_TOPIC_ID_CHARS = 64;

/** The arguments of a search. */
export const searchInput = z.strictObject({
  query: z.string().max(MAX_QUERY_CHARS, `exceeds max length (${MAX_QUERY_CHARS})`),
  topic_id: z.string().min(1, "must be a non-empty string").max(
    MAX_TOPIC_ID_CHARS,
    `exceeds max length (${MAX_TOPIC_ID_CHARS})`,
  ).nullish().describe("Search only this topic"),
  mode: z.enum(["hybrid", "fts", "semantic"]).default("hybrid"),
  limit: z.int().min(1, "must be an int > 0").max(
    MAX_SEARCH_LIMIT,
    `must be <= ${MAX_SEARCH_LIMIT}`,
  ).default(20),
  model: z.string().max(200, "exceeds max length (200)").nullish().describe(
    "Embedding model for semantic/hybrid modes (default: the configured one)",
  ),
  include_content: z.boolean().default(false).describe("Include content_markdown in results"),
  sender: z.string().max(64, "exceeds max length (64)").nullish().describe(
    "Only messages from this agent",
  ),
  message_type: z.string().max(32, "exceeds max length (32)").nullish().describe(
    'Only messages of this type, e.g. "question"',
  ),
  since: timeArg.nullish().describe("Only messages created at or after this time"),
  until: timeArg.nullish().describe("Only messages created at or before this time"),
});

/**
 * The engine's arguments for parsed {@linkcode searchInput} arguments.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a `since`/`until` that is no date
 */
export function searchArgsOf(input: z.output<typeof searchInput>): SearchArgs {
  return {
    query: input.query,
    topicId: input.topic_id ?? undefined,
    mode: input.mode,
    limit: input.limit,
    model: input.model ?? undefined,
    includeContent: input.include_content,
    sender: input.sender ?? undefined,
    messageType: input.message_type ?? undefined,
    since: toSeconds(input.since, "since"),
    until: toSeconds(input.until, "until"),
  };
}

/** Unix seconds from a number of seconds or an ISO 8601 date. */
function toSeconds(
  value: number | string | null | undefined,
  field: string,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "number") return value;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidArgument(`${field} must be unix seconds or an ISO 8601 date`);
  return ms / 1000;
}

/** What a search answers: `messages_search`'s structured result, and `GET /api/search`'s body. */
export const searchResultSchema = z.object({
  query: z.string(),
  mode: z.enum(["hybrid", "fts", "semantic"]),
  topic_id: z.string().nullable(),
  include_content: z.boolean(),
  results: z.array(z.object({
    topic_id: z.string(),
    topic_name: z.string(),
    message_id: z.string(),
    seq: z.int(),
    sender: z.string(),
    message_type: z.string(),
    created_at: z.number(),
    snippet: z.string(),
    rank: z.number().optional(),
    fts_rank: z.number().nullable().optional(),
    semantic_score: z.number().nullable().optional(),
    score: z.number().optional(),
    content_markdown: z.string().optional(),
  })),
  count: z.int(),
});
