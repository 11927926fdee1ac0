/**
 * The `mailbox` profile. Seed 003: one mailbox per agent, the agent named in the URL (`/agents/{agent}/mcp/`).
 *
 * @module
 */

import { mailboxPush } from "../features/mailbox_push.ts";
import { checkMailTool } from "../tools/check_mail.ts";
import { sendToAgentTool } from "../tools/send_to_agent.ts";
import { hookWatchOf } from "./hooks.ts";
import type { Profile } from "./profile.ts";

/** The `mailbox` profile. */
export const mailbox: Profile = {
  name: "mailbox",
  tools: [sendToAgentTool, checkMailTool],
  instructions: `Agent mailboxes: you are the agent named in this endpoint's URL.
send_to_agent(name, msg, msg_id?) puts a message in another agent's mailbox and returns its id (reuse the id to retry safely). check_mail() takes your oldest unread message, {id, from, content}, or null when there is none: call it in a loop to read everything.`,
  isRole: false,
  features: [mailboxPush],
  agent: "required",
  install: undefined,
  stdio: { recordSession: true, registerPeer: false },
  hooks: hookWatchOf("mailbox"),
  http: { perAgent: true, jsonResponse: true },
};
