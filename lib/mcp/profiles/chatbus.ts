/**
 * The `chatbus` profile. Seed 002: the AgentChatBus dialect, in the seed's order.
 *
 * @module
 */

import { chatResources } from "../features/chat_resources.ts";
import {
  agentHeartbeatTool,
  agentListTool,
  agentRegisterTool,
  agentResumeTool,
  agentSetTypingTool,
  agentUnregisterTool,
  agentUpdateTool,
  busConnectTool,
  busGetConfigTool,
  templateCreateTool,
  templateGetTool,
  templateListTool,
} from "../tools/chat/agents.ts";
import {
  msgEditHistoryTool,
  msgEditTool,
  msgGetTool,
  msgListTool,
  msgPostTool,
  msgReactTool,
  msgSearchTool,
  msgUnreactTool,
  msgWaitTool,
} from "../tools/chat/messages.ts";
import {
  closeMeetingTool,
  threadArchiveTool,
  threadCloseTool,
  threadCreateTool,
  threadDeleteTool,
  threadGetTool,
  threadListTool,
  threadSetStateTool,
  threadSettingsGetTool,
  threadSettingsUpdateTool,
  threadWaitStateGetTool,
} from "../tools/chat/threads.ts";
import { hookWatchOf } from "./hooks.ts";
import type { Profile } from "./profile.ts";

/** The `chatbus` profile. */
export const chatbus: Profile = {
  name: "chatbus",
  tools: [
    threadCreateTool,
    threadListTool,
    threadGetTool,
    threadDeleteTool,
    threadSetStateTool,
    threadCloseTool,
    closeMeetingTool,
    threadArchiveTool,
    threadWaitStateGetTool,
    threadSettingsGetTool,
    threadSettingsUpdateTool,
    templateListTool,
    templateGetTool,
    templateCreateTool,
    msgPostTool,
    msgListTool,
    msgWaitTool,
    msgGetTool,
    msgSearchTool,
    msgEditTool,
    msgEditHistoryTool,
    msgReactTool,
    msgUnreactTool,
    agentRegisterTool,
    agentHeartbeatTool,
    agentResumeTool,
    agentUnregisterTool,
    agentListTool,
    agentUpdateTool,
    agentSetTypingTool,
    busGetConfigTool,
    busConnectTool,
  ],
  instructions: `Agent chat bus (AgentChatBus-compatible): threads where agents and people talk.
1. bus_connect(thread_name=..., ide=..., model=...) registers you, joins (or creates) the thread and returns your agent_id and token (keep them: pass them to bus_connect again to resume), the messages so far and a sync context (current_seq, reply_token).
2. msg_post(thread_id, author=<your agent_id>, content, expected_last_seq=<current_seq>, reply_token=<reply_token>) posts; it returns the next current_seq and reply_token. Each token works once.
3. msg_wait(thread_id, after_seq=<current_seq>) waits for new messages and returns a fresh sync context. If msg_post fails with SeqMismatchError, read new_messages_1st_read, call msg_wait, then write a new reply: do not resend the old one.
4. msg_search finds anything said before; thread_set_state and thread_close track the work.`,
  isRole: false,
  features: [chatResources],
  agent: "ignored",
  install: { serverName: "agent-bus-chatbus", args: ["--profile", "chatbus"] },
  // Chatbus agents are woken by msg_wait and have identities of their own: no session record.
  stdio: { recordSession: false, registerPeer: false },
  hooks: hookWatchOf("chatbus"),
  http: { path: "/chatbus/mcp", atMcp: true, jsonResponse: false },
};
