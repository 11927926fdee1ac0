/**
 * SQL for the AgentChatBus dialect (seed 002), one module per table group:
 * threads (what it adds to a topic), agents, reply tokens, fair turns and
 * refresh requests, wait states, message extras (role, priority, edits,
 * reactions, attachments), templates, metrics, and the journal of changes
 * besides messages. Messages themselves are the bus's `messages` rows, so
 * every dialect reads one stream. Reading an AgentChatBus database for an
 * import is `acb_file.ts`, apart: it is another program's file.
 *
 * @module
 */

export * from "./threads.ts";
export * from "./agents.ts";
export * from "./tokens.ts";
export * from "./turns.ts";
export * from "./waits.ts";
export * from "./messages.ts";
export * from "./templates.ts";
export * from "./metrics.ts";
export * from "./events.ts";
