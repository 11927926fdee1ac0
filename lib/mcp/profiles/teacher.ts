/**
 * The `teacher` profile. Seed 001: the teacher role answers; the topic tools are the core bus's own.
 *
 * @module
 */

import { teacherPrompts } from "../features/prompts.ts";
import { rolePingTool } from "../tools/role_ping.ts";
import { teacherDrainTool } from "../tools/teacher_drain.ts";
import { teacherPublishTool } from "../tools/teacher_publish.ts";
import { topicCloseTool } from "../tools/topic_close.ts";
import { topicCreateTool } from "../tools/topic_create.ts";
import { topicListTool } from "../tools/topic_list.ts";
import { hookWatchOf } from "./hooks.ts";
import type { Profile } from "./profile.ts";

/** The `teacher` profile. */
export const teacher: Profile = {
  name: "teacher",
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
  isRole: true,
  features: [teacherPrompts],
  agent: "optional",
  install: { serverName: "agent-bus-teacher", args: ["--role", "teacher"] },
  stdio: { recordSession: true, registerPeer: false },
  hooks: hookWatchOf("teacher"),
  http: { jsonResponse: false },
};
