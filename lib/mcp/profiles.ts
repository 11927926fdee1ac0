/**
 * Profiles: which tools a server exposes, and what it tells clients in
 * `initialize`. A profile is a plain list.
 *
 * @module
 */

import type { ToolDefinition } from "./define_tool.ts";
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
} from "./tools/chat/agents.ts";
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
} from "./tools/chat/messages.ts";
import {
  closeMeetingTool,
  threadArchiveTool,
  threadCloseTool,
  threadCreateTool,
  threadDeleteTool,
  threadGetTool,
  threadListTool,
  threadSetStateTool,
  threadWaitStateGetTool,
} from "./tools/chat/threads.ts";
import { askTool } from "./tools/ask.ts";
import { askCancelTool } from "./tools/ask_cancel.ts";
import { askPollTool } from "./tools/ask_poll.ts";
import { busBroadcastTool } from "./tools/bus_broadcast.ts";
import { busDrainTool } from "./tools/bus_drain.ts";
import { busPeersTool } from "./tools/bus_peers.ts";
import { busSendTool } from "./tools/bus_send.ts";
import { checkMailTool } from "./tools/check_mail.ts";
import { cursorResetTool } from "./tools/cursor_reset.ts";
import { messagesSearchTool } from "./tools/messages_search.ts";
import { pingTool } from "./tools/ping.ts";
import { rolePingTool } from "./tools/role_ping.ts";
import { sendToAgentTool } from "./tools/send_to_agent.ts";
import { syncTool } from "./tools/sync.ts";
import { teacherDrainTool } from "./tools/teacher_drain.ts";
import { teacherPublishTool } from "./tools/teacher_publish.ts";
import { topicCloseTool } from "./tools/topic_close.ts";
import { topicCreateTool } from "./tools/topic_create.ts";
import { topicJoinTool } from "./tools/topic_join.ts";
import { topicListTool } from "./tools/topic_list.ts";
import { topicPresenceTool } from "./tools/topic_presence.ts";
import { topicResolveTool } from "./tools/topic_resolve.ts";

/** Names of the profiles. */
export type ProfileName = "peer" | "mailbox" | "peerbus" | "teacher" | "student" | "chatbus";

/** A profile's tools and instructions. */
export interface Profile {
  tools: readonly ToolDefinition[];
  instructions: string;
}

const PROFILES: Record<ProfileName, Profile> = {
  // Agent Bus v6.3: topics and sync, in the seed's order.
  peer: {
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
  },
  // Seed 003: one mailbox per agent, the agent named in the URL.
  mailbox: {
    tools: [sendToAgentTool, checkMailTool],
    instructions: `Agent mailboxes: you are the agent named in this endpoint's URL.
send_to_agent(name, msg, msg_id?) puts a message in another agent's mailbox and returns its id (reuse the id to retry safely). check_mail() takes your oldest unread message, {id, from, content}, or null when there is none: call it in a loop to read everything.`,
  },
  // Seed 001: the teacher role answers; the topic tools are the core bus's own.
  teacher: {
    tools: [
      rolePingTool("teacher"),
      topicCreateTool,
      topicListTool,
      topicCloseTool,
      teacherDrainTool,
      teacherPublishTool,
    ],
    instructions:
      `Agent Bus, teacher role: you know this repository and answer the questions of a student agent that is onboarding.
1. topic_create(name=...) opens (or reuses) a topic; tell the student its name.
2. teacher_drain(topic_id=..., wait_seconds=...) lists pending questions, oldest first.
3. teacher_publish(topic_id=..., responses=[{question_id, answer_markdown, repo_pointers, suggested_followups, teacher_notes}]) answers them. Point to real files in repo_pointers, and give 3-5 suggested_followups: the student picks one as its next question, so order them from most to least useful. teacher_notes are never shown to the student.
4. topic_close(topic_id=...) stops new questions; you can still drain and answer the backlog.`,
  },
  // Seed 001: the student role asks.
  student: {
    tools: [
      rolePingTool("student"),
      topicListTool,
      topicResolveTool,
      askTool,
      askPollTool,
      askCancelTool,
    ],
    instructions:
      `Agent Bus, student role: you are onboarding onto a repository and a teacher agent answers your questions.
1. topic_resolve(name=...) (or topic_list) finds the topic the teacher opened.
2. ask(topic_id=..., question=..., wait_seconds=60) asks and waits for the answer; ask_poll(topic_id, question_id) checks a question later; ask_cancel withdraws one.
3. If a tool result contains FOLLOW_UP_REQUIRED, call ask() with exactly ONE of the suggested follow-up questions, unless onboarding is complete: then output NO_FOLLOWUP_NEEDED and a 3-5 bullet summary of what you learned.`,
  },
  // Seed 002: the AgentChatBus dialect, in the seed's order.
  chatbus: {
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
  },
  // Seed 004: a peer-bus server bound to one name.
  peerbus: {
    tools: [busSendTool, busBroadcastTool, busPeersTool, busDrainTool],
    instructions:
      `Peer bus: you are one named peer. bus.peers() tells your name and who else is running. bus.send(to, body) and bus.broadcast(body) send any JSON body. bus.drain() returns everything sent to you since the last drain, each message once.`,
  },
};

/**
 * The tools and instructions of a profile.
 *
 * @param options `noDrain` leaves `bus.drain` out (for push-driven clients)
 */
export function profile(name: ProfileName, options: { noDrain?: boolean } = {}): Profile {
  const chosen = PROFILES[name];
  if (!options.noDrain) return chosen;
  return { ...chosen, tools: chosen.tools.filter((tool) => tool.name !== "bus.drain") };
}
