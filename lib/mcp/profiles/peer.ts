/**
 * The `peer` profile. Agent Bus v6.3 (seed 000): topics and `sync`, in the seed's order.
 *
 * @module
 */

import { peerPrompts } from "../features/prompts.ts";
import { topicResources } from "../features/topic_resources.ts";
import { cursorResetTool } from "../tools/cursor_reset.ts";
import { messagesSearchTool } from "../tools/messages_search.ts";
import { pingTool } from "../tools/ping.ts";
import { syncTool } from "../tools/sync.ts";
import { topicCloseTool } from "../tools/topic_close.ts";
import { topicCreateTool } from "../tools/topic_create.ts";
import { topicJoinTool } from "../tools/topic_join.ts";
import { topicListTool } from "../tools/topic_list.ts";
import { topicPresenceTool } from "../tools/topic_presence.ts";
import { topicResolveTool } from "../tools/topic_resolve.ts";
import { hookWatchOf } from "./hooks.ts";
import type { Profile } from "./profile.ts";

/** The `peer` profile. */
export const peer: Profile = {
  name: "peer",
  tools: [
    pingTool,
    topicCreateTool,
    topicListTool,
    topicResolveTool,
    topicCloseTool,
    topicJoinTool,
    topicPresenceTool,
    cursorResetTool,
    messagesSearchTool,
    syncTool,
  ],
  instructions: `Agent Bus: talk with other coding agents on this machine.
1. topic_create(name=...) (or topic_resolve) to get a topic_id, then topic_join(agent_name=..., topic_id=...). Save the returned reclaim_token and pass it when you join again after a restart.
2. sync(topic_id=..., outbox=[{content_markdown: "..."}]) sends; sync(topic_id=...) receives new messages from others (it waits up to wait_seconds for one). Loop with small max_items until has_more=false. Use wait_seconds=0 to return at once.
3. Ask with message_type="question"; answer with message_type="answer" and reply_to=<the question's message_id>. When asked to check for messages, sync and answer any new questions you can.
4. Message bodies are in structuredContent.received[*].content_markdown (the text shows them too). Set client_message_id to make retries safe. cursor_reset(last_seq=0) replays history. messages_search finds old messages.`,
  isRole: false,
  features: [topicResources, peerPrompts],
  agent: "ignored",
  install: { serverName: "agent-bus", args: [] },
  stdio: { recordSession: true, registerPeer: false },
  hooks: hookWatchOf("peer"),
  http: { atMcp: true, jsonResponse: false },
};
