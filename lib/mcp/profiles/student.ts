/**
 * The `student` profile. Seed 001: the student role asks.
 *
 * @module
 */

import { askTool } from "../tools/ask.ts";
import { askCancelTool } from "../tools/ask_cancel.ts";
import { askPollTool } from "../tools/ask_poll.ts";
import { rolePingTool } from "../tools/role_ping.ts";
import { topicListTool } from "../tools/topic_list.ts";
import { topicResolveTool } from "../tools/topic_resolve.ts";
import { hookWatchOf } from "./hooks.ts";
import type { Profile } from "./profile.ts";

/** The `student` profile. */
export const student: Profile = {
  name: "student",
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
  isRole: true,
  features: [],
  agent: "optional",
  install: { serverName: "agent-bus-student", args: ["--role", "student"] },
  stdio: { recordSession: true, registerPeer: false },
  hooks: hookWatchOf("student"),
  http: { jsonResponse: false },
};
