/**
 * Zod schemas of the chatbus dialect's values, shared by its tools and
 * REST routes.
 *
 * @module
 */

import { z } from "zod";
import type { ResolvedConfig } from "../../config.ts";
import { PRIORITIES, ROLES, STOP_REASONS } from "./post.ts";
import { MAX_MESSAGES } from "./read.ts";
import { MAX_THREAD_LIST, THREAD_STATES, THREAD_STATUSES } from "./threads.ts";

/** A thread id. */
export const threadIdArg = z.string().min(1, "must be a non-empty string").max(
  64,
  "must be at most 64 characters",
)
  .describe("Thread ID");
/** A message id. */
export const messageIdArg = z.string().min(1, "must be a non-empty string").max(
  64,
  "must be at most 64 characters",
)
  .describe("Message ID");
/** An agent id. */
export const agentIdArg = z.string().min(1, "must be a non-empty string").max(
  64,
  "must be at most 64 characters",
);
/** An agent token. */
export const tokenArg = z.string().min(1, "must be a non-empty string").max(
  256,
  "must be at most 256 characters",
);
/** A state `thread_set_state` accepts. */
export const threadStateArg = z.enum(THREAD_STATES);
/** A status `thread_list` filters on. */
export const threadStatusArg = z.enum(THREAD_STATUSES);
/** A message role. */
export const roleArg = z.enum(ROLES);
/** A message priority. */
export const priorityArg = z.enum(PRIORITIES);
/** A `metadata.stop_reason`. */
export const stopReasonArg = z.enum(STOP_REASONS);
/** `return_format` of msg_list and msg_wait. */
export const returnFormatArg = z.enum(["blocks", "json"]).default("blocks").describe(
  "'blocks' (default): MCP content blocks, a header and a body per message, images as image blocks; 'json': one text block with a JSON document",
);

/** The input of `thread_set_state` (also `POST /api/threads/{id}/state`). */
export const threadSetStateInput = z.object({ thread_id: threadIdArg, state: threadStateArg });
/** The input of `thread_close` (also `POST /api/threads/{id}/close`). */
export const threadCloseInput = z.object({
  thread_id: threadIdArg,
  summary: z.string().max(16384, "must be at most 16384 characters").optional().describe(
    "Optional closing summary",
  ),
});
/** The input of `thread_archive` (also `POST /api/threads/{id}/archive`). */
export const threadArchiveInput = z.object({ thread_id: threadIdArg });

/** A sync context's fields, for output schemas. */
export const syncContextShape = {
  current_seq: z.int(),
  reply_token: z.string(),
  reply_window: z.object({ expires_at: z.string(), max_new_messages: z.int() }),
};

/** A thread, for output schemas. */
export const threadSchema = z.object({
  thread_id: z.string(),
  topic: z.string(),
  status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  closed_at: z.string().nullable(),
  summary: z.string().nullable(),
  system_prompt: z.string().nullable(),
  template_id: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  creator_admin_id: z.string().nullable(),
});

/** A reaction, for output schemas. */
export const reactionSchema = z.object({
  message_id: z.string(),
  agent_id: z.string(),
  reaction: z.string(),
  created_at: z.string(),
});

/** A chatbus message, for output schemas. */
export const chatMessageSchema = z.object({
  msg_id: z.string(),
  thread_id: z.string(),
  seq: z.int(),
  author: z.string(),
  author_id: z.string().nullable(),
  author_name: z.string(),
  role: z.string(),
  priority: z.string(),
  content: z.string(),
  created_at: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  reply_to_msg_id: z.string().nullable(),
  edited_at: z.string().nullable(),
  edit_version: z.int(),
  reactions: z.array(reactionSchema),
});

/** What `msg_post` answers (and REST's post, with the message). */
export const postedSchema = z.object({
  msg_id: z.string(),
  seq: z.int(),
  reply_to_msg_id: z.string().nullable(),
  priority: z.string(),
  handoff_target: z.string().optional(),
  stop_reason: z.string().optional(),
  current_seq: z.int().optional(),
  reply_token: z.string().optional(),
  reply_window: syncContextShape.reply_window.optional(),
});

/** What `msg_edit` answers (and `PUT /api/messages/{id}`). */
export const editedSchema = z.object({
  no_change: z.literal(true).optional(),
  msg_id: z.string().optional(),
  version: z.int(),
  edited_at: z.string().optional(),
  edited_by: z.string().optional(),
});

/** What `msg_edit_history` answers (and `GET /api/messages/{id}/history`). */
export const editHistorySchema = z.object({
  message_id: z.string(),
  current_content: z.string(),
  edit_version: z.int(),
  edits: z.array(z.object({
    version: z.int(),
    old_content: z.string(),
    edited_by: z.string(),
    created_at: z.string(),
  })),
  has_more: z.boolean().optional(),
  next_after_version: z.int().optional(),
});

/** What `msg_react` answers. */
export const reactedSchema = reactionSchema.extend({ added: z.boolean() });

/** An agent as listed, for output schemas. */
export const agentSchema = z.object({
  agent_id: z.string(),
  name: z.string(),
  display_name: z.string(),
  ide: z.string(),
  model: z.string(),
  emoji: z.string(),
  alias_source: z.enum(["user", "auto"]),
  description: z.string(),
  is_online: z.boolean(),
  capabilities: z.array(z.string()),
  skills: z.array(z.record(z.string(), z.unknown())),
  registered_at: z.string(),
  last_heartbeat: z.string(),
  last_activity: z.string(),
  last_activity_time: z.string(),
});

/** A template, for output schemas. */
export const templateSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  system_prompt: z.string().nullable(),
  default_metadata: z.record(z.string(), z.unknown()).nullable(),
  is_builtin: z.boolean(),
  created_at: z.string().nullable(),
});

/** A skill (A2A AgentCard style): id and name required. */
export const skillArg = z.object({
  id: z.string().max(200),
  name: z.string().max(200),
  description: z.string().max(2000).optional(),
  tags: z.array(z.string().max(100)).max(50).optional(),
  examples: z.array(z.string().max(2000)).max(50).optional(),
});

/** Profile fields of register, update and bus_connect. */
export const profileShape = {
  display_name: z.string().max(100).optional().describe(
    "Name people see (blank: the automatic one)",
  ),
  description: z.string().max(2000).optional(),
  emoji: z.string().max(16).optional().describe("One emoji as avatar (invalid: a chosen one)"),
  capabilities: z.array(z.string().max(100)).max(50).optional().describe("Capability tags"),
  skills: z.array(skillArg).max(50).optional().describe(
    "A2A-style skills: {id, name, description?, tags?, examples?}",
  ),
};

/** What the console sees of a chatbus message (`Message.chat`), for the OpenAPI document. */
export const chatExtrasSchema = z.object({
  author_id: z.string().nullable(),
  role: z.string(),
  priority: z.string(),
  edit_version: z.int(),
  edited_at: z.number().nullable(),
  reactions: z.array(z.object({ reaction: z.string(), agent_id: z.string() })),
  attachments: z.array(z.string()).describe("MIME types; GET /api/messages/{id}/attachments/{n}"),
});

/** An agent's credentials (`agent_heartbeat`, `agent_resume`, `agent_unregister`, and REST). */
export const agentCredentialsInput = z.object({ agent_id: agentIdArg, token: tokenArg });

/** The input of `agent_register` (also `POST /api/agents/register`). */
export const agentRegisterInput = z.object({
  ide: z.string().max(100).describe("Your client, e.g. Cursor, Claude Code, Codex"),
  model: z.string().max(100).describe("Your model"),
  ...profileShape,
});

/** The input of `thread_create` (`POST /api/threads` takes the creator's id and token apart). */
export const threadCreateInput = z.object({
  topic: z.string().min(1, "must be a non-empty string").max(200, "must be at most 200 characters")
    .describe("Short description of the thread's purpose"),
  agent_id: agentIdArg.describe("Creator agent id"),
  token: tokenArg.describe("Creator token"),
  metadata: z.record(z.string(), z.unknown()).optional(),
  system_prompt: z.string().max(16384).optional().describe("Collaboration rules for this thread"),
  template: z.string().max(100).optional().describe("Template id to apply defaults from"),
});

/** The input of `thread_list` (also `GET /api/threads`). */
export const threadListInput = z.object({
  status: threadStatusArg.optional(),
  include_archived: z.boolean().default(false),
  limit: z.int().min(0, "must be an int >= 0").default(0).describe(
    `Most threads to return; 0 = all, up to the hard cap of ${MAX_THREAD_LIST}`,
  ),
  before: z.string().max(64).optional().describe(
    "Cursor: an ISO date; threads created strictly before it",
  ),
});

/** The input of `msg_post` (also `POST /api/threads/{id}/messages`, the id in the path). */
export function msgPostInput(config: ResolvedConfig) {
  return z.object({
    thread_id: threadIdArg,
    author: z.string().min(1, "must be a non-empty string").max(200).describe(
      "Your agent_id (or a name, for a human or script)",
    ),
    content: z.string().max(
      config.maxMessageChars,
      `must be at most ${config.maxMessageChars} characters`,
    ),
    expected_last_seq: z.int().min(0, "must be an int >= 0").optional().describe(
      "Strict sync field: the current_seq you last saw",
    ),
    reply_token: z.string().max(256).optional().describe(
      "Strict sync field: your unused reply_token",
    ),
    role: roleArg.default("user"),
    priority: priorityArg.default("normal"),
    mentions: z.array(z.string().max(64)).max(50).optional().describe("Agent ids mentioned"),
    metadata: z.looseObject({
      handoff_target: z.string().max(64).optional(),
      stop_reason: stopReasonArg.optional(),
      attachments: z.array(z.record(z.string(), z.unknown())).max(4).optional(),
      mentions: z.array(z.string().max(64)).max(50).optional(),
    }).optional(),
    reply_to_msg_id: messageIdArg.optional().describe(
      "A message of the same thread this replies to",
    ),
  });
}

/** The input of `msg_list` (also `GET /api/threads/{id}/messages`, with REST's own defaults). */
export const msgListInput = z.object({
  thread_id: threadIdArg,
  after_seq: z.int().min(0, "must be an int >= 0").default(0),
  limit: z.int().min(1, "must be an int >= 1").max(1000).default(MAX_MESSAGES),
  priority: priorityArg.optional(),
  return_format: returnFormatArg,
  include_system_prompt: z.boolean().default(true),
  include_attachments: z.boolean().default(true),
});

/** The input of `thread_settings_update` (also `POST /api/threads/{id}/settings`). */
export const threadSettingsUpdateInput = z.object({
  thread_id: threadIdArg,
  auto_administrator_enabled: z.boolean().optional().describe(
    "AgentChatBus's admin coordinator; agent-bus has none, so only false is accepted",
  ),
  timeout_seconds: z.int().min(30, "must be an int >= 30").optional().describe(
    "The coordinator's takeover timeout (none here: refused)",
  ),
  switch_timeout_seconds: z.int().min(30, "must be an int >= 30").optional().describe(
    "The coordinator's switch timeout (none here: refused)",
  ),
});

/** What `thread_settings_get` and `thread_settings_update` answer. */
export const threadSettingsSchema = z.object({
  thread_id: z.string(),
  auto_administrator_enabled: z.boolean(),
  timeout_seconds: z.int().nullable(),
  switch_timeout_seconds: z.int().nullable(),
  auto_assigned_admin_id: z.string().nullable(),
  auto_assigned_admin_name: z.string().nullable(),
  creator_admin_id: z.string().nullable(),
  creator_admin_name: z.string().nullable(),
});

/** The input of `template_create` (also `POST /api/templates`). */
export const templateCreateInput = z.object({
  id: z.string().min(1).max(100),
  name: z.string().min(1).max(100),
  description: z.string().max(16384).optional(),
  system_prompt: z.string().max(16384).optional(),
  default_metadata: z.record(z.string(), z.unknown()).optional(),
  // AgentChatBus's schema names the field `metadata` while its handler reads `default_metadata`.
  metadata: z.record(z.string(), z.unknown()).optional().describe("Alias of default_metadata"),
});

/** The input of `msg_react` and `msg_unreact` (also REST's reactions, the id in the path). */
export const reactionInput = z.object({
  message_id: messageIdArg,
  reaction: z.string().min(1, "must be a non-empty string").max(64),
  agent_id: agentIdArg.optional().describe("Who reacts (default: this connection's agent)"),
  token: z.string().max(256).optional().describe(
    "agent_id's token: needed when agent_id is not this connection's agent",
  ),
});

/** The input of `agent_update` (also `PUT /api/agents/{id}`, the id in the path). */
export const agentUpdateInput = agentCredentialsInput.extend(profileShape);
