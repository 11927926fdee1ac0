/**
 * `agent-bus db import-agentchatbus FILE`: an AgentChatBus database moved
 * onto the bus — its agents (keeping their ids and tokens, so they resume
 * as before; only the tokens' hashes are stored), custom templates, threads
 * (as topics, keeping their ids, states, summaries, system prompts, templates
 * and creators), and messages with their authors, roles, priorities,
 * replies, edits and reactions.
 *
 * Each thread's messages are renumbered 1, 2, 3… in their order (AgentChatBus
 * numbers messages across the whole bus; agent-bus numbers them per topic,
 * without gaps). A page of messages is prepared (search terms computed)
 * before its write transaction opens, and written in one. Whatever the bus
 * already holds (an agent, template or thread with the same id) is kept and
 * counted as skipped, so running the import again adds nothing. At the end
 * every imported thread's messages are counted on both sides.
 *
 * @module
 */

import { BusError } from "../../errors.ts";
import { type AcbMessage, type AcbThread, AgentChatBusFile } from "../../store/agentchatbus.ts";
import {
  addReaction,
  agentNameTaken,
  getAgent,
  getTemplate,
  insertAgent,
  insertChatExtras,
  insertEdit,
  putTemplate,
  putThread,
} from "../../store/chat.ts";
import { insertMessage, setNextSeq } from "../../store/messages.ts";
import { termsForSend } from "../../store/search.ts";
import { bumpTopicsVersion, getTopic, insertTopic } from "../../store/topics.ts";
import { type Bus, write } from "../mod.ts";
import { MAX_TOPIC_NAME_CHARS } from "../topics.ts";
import { BUILTIN_TEMPLATES, THREAD_STATES } from "./threads.ts";
import { fromIso, hashSecret } from "./wire.ts";

/** Messages written per transaction. */
const PAGE = 500;

/** What was found, imported and skipped, per kind. */
export interface ImportCounts {
  found: number;
  imported: number;
  skipped: number;
}

/** The result of an import. */
export interface ImportReport {
  agents: ImportCounts;
  templates: ImportCounts;
  threads: ImportCounts;
  messages: ImportCounts;
  edits: number;
  reactions: number;
}

/** Called after each page of messages. */
export type ImportProgress = (messages: number, total: number) => void;

/**
 * Import the AgentChatBus database at `path` into `bus`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` when the file is not an AgentChatBus database,
 *   `INTERNAL_ERROR` when a thread's message count differs after its import
 */
export async function importAgentChatBus(
  bus: Bus,
  path: string,
  onProgress: ImportProgress = () => {},
): Promise<ImportReport> {
  const file = new AgentChatBusFile(path);
  try {
    const report: ImportReport = {
      agents: await importAgents(bus, file),
      templates: await importTemplates(bus, file),
      threads: { found: 0, imported: 0, skipped: 0 },
      messages: { found: 0, imported: 0, skipped: 0 },
      edits: 0,
      reactions: 0,
    };
    const threads = file.threads();
    const total = threads.reduce((sum, thread) => sum + file.messageCount(thread.id), 0);
    let done = 0;
    onProgress(0, total);
    for (const thread of threads) {
      report.threads.found++;
      const count = file.messageCount(thread.id);
      report.messages.found += count;
      if (!await createTopic(bus, thread)) {
        report.threads.skipped++;
        report.messages.skipped += count;
        done += count;
        onProgress(done, total);
        continue;
      }
      report.threads.imported++;
      let seq = 0;
      for (let after = -Infinity;;) {
        const page = file.messages(thread.id, after, PAGE);
        if (page.length === 0) break;
        const ids = page.map((m) => m.id);
        const edits = file.edits(ids);
        const reactions = file.reactions(ids);
        // (Terms and metadata are worked out before the write transaction opens.)
        const prepared = page.map((m) => ({
          message: m,
          terms: termsForSend(bus.store, m.content),
          metadataJson: jsonObject(m.metadata),
        }));
        const first = seq;
        await write(bus, () => {
          let next = first;
          for (const ready of prepared) writeMessage(bus, ready, ++next);
          for (const edit of edits) {
            insertEdit(bus.store, { ...edit, created_at: seconds(edit.created_at) });
          }
          for (const reaction of reactions) {
            addReaction(bus.store, {
              message_id: reaction.message_id,
              agent_id: reaction.agent_id ?? "human",
              reaction: reaction.reaction,
              created_at: seconds(reaction.created_at),
            });
          }
          setNextSeq(bus.store, { topicId: thread.id, next: next + 1, now: bus.now() });
        });
        seq += page.length;
        report.edits += edits.length;
        report.reactions += reactions.length;
        report.messages.imported += page.length;
        done += page.length;
        onProgress(done, total);
        after = page.at(-1)!.seq;
      }
      if (seq !== count) {
        throw new BusError(
          "INTERNAL_ERROR",
          `Thread ${thread.id}: ${seq} of its ${count} messages were imported`,
        );
      }
    }
    return report;
  } finally {
    file.close();
  }
}

/** The time of an ISO date of AgentChatBus, in seconds (now when it cannot be read). */
function seconds(iso: string | null): number {
  return (iso === null ? undefined : fromIso(iso)) ?? Date.now() / 1000;
}

async function importAgents(bus: Bus, file: AgentChatBusFile): Promise<ImportCounts> {
  // (Hashing and parsing happen before the write transaction opens.)
  const agents = file.agents().map((agent) => ({
    ...agent,
    tokenHash: hashSecret(agent.token),
    capabilitiesJson: jsonArray(agent.capabilities),
    skillsJson: jsonArray(agent.skills),
  }));
  const imported = await write(bus, () => {
    let n = 0;
    for (const agent of agents) {
      if (getAgent(bus.store, agent.id)) continue;
      let name = agent.name || `${agent.ide ?? "CLI"} (${agent.model ?? "unknown"})`;
      for (let k = 2; agentNameTaken(bus.store, name); k++) name = `${agent.name} ${k}`;
      const heartbeat = seconds(agent.last_heartbeat);
      insertAgent(bus.store, {
        agent_id: agent.id,
        name,
        display_name: agent.display_name || null,
        ide: agent.ide ?? "CLI",
        model: agent.model ?? "unknown",
        description: agent.description ?? "",
        capabilities_json: agent.capabilitiesJson,
        skills_json: agent.skillsJson,
        emoji: agent.emoji || "🤖",
        token_hash: agent.tokenHash,
        registered_at: heartbeat,
        last_heartbeat: heartbeat,
        last_activity: agent.last_activity ?? "imported",
        last_activity_time: seconds(agent.last_activity_time ?? agent.last_heartbeat),
      });
      n++;
    }
    return n;
  });
  return { found: agents.length, imported, skipped: agents.length - imported };
}

async function importTemplates(bus: Bus, file: AgentChatBusFile): Promise<ImportCounts> {
  const templates = file.templates();
  const imported = await write(bus, () => {
    let n = 0;
    for (const template of templates) {
      const builtin = BUILTIN_TEMPLATES.some((t) => t.id === template.id);
      if (builtin || getTemplate(bus.store, template.id)) continue;
      putTemplate(bus.store, {
        id: template.id,
        name: template.name,
        description: template.description,
        system_prompt: template.system_prompt,
        default_metadata_json: template.default_metadata,
        created_at: seconds(template.created_at),
      });
      n++;
    }
    return n;
  });
  return { found: templates.length, imported, skipped: templates.length - imported };
}

/** The thread's topic and thread rows; false when the bus already has a topic with its id. */
async function createTopic(bus: Bus, thread: AcbThread): Promise<boolean> {
  const metadataJson = jsonObject(thread.metadata);
  return await write(bus, () => {
    if (getTopic(bus.store, thread.id)) return false;
    const closed = thread.status === "closed";
    insertTopic(bus.store, {
      topic_id: thread.id,
      name: thread.topic.slice(0, MAX_TOPIC_NAME_CHARS) || `thread-${thread.id}`,
      created_at: seconds(thread.created_at),
      status: closed ? "closed" : "open",
      closed_at: closed ? seconds(thread.closed_at ?? thread.updated_at) : null,
      close_reason: closed ? thread.summary : null,
      metadata_json: metadataJson,
    });
    const state = (THREAD_STATES as readonly string[]).includes(thread.status)
      ? thread.status
      : "discuss";
    putThread(bus.store, {
      topic_id: thread.id,
      state,
      summary: thread.summary,
      system_prompt: thread.system_prompt,
      template_id: thread.template_id,
      creator_admin_id: thread.creator_admin_id,
      creator_admin_name: thread.creator_admin_name,
      updated_at: seconds(thread.updated_at),
    });
    bumpTopicsVersion(bus.store);
    return true;
  });
}

/** One message and its chat extras, at `seq` (inside the page's transaction). */
function writeMessage(
  bus: Bus,
  { message, terms, metadataJson }: {
    message: AcbMessage;
    terms: string;
    metadataJson: string | null;
  },
  seq: number,
): void {
  insertMessage(bus.store, {
    message_id: message.id,
    topic_id: message.thread_id,
    seq,
    sender: message.author,
    message_type: "message",
    reply_to: message.reply_to_msg_id,
    content_markdown: message.content,
    metadata_json: metadataJson,
    client_message_id: null,
    created_at: seconds(message.created_at),
    terms,
  });
  insertChatExtras(bus.store, {
    message_id: message.id,
    author_id: message.author_id,
    role: message.role,
    priority: message.priority,
    edit_version: message.edit_version ?? 0,
    edited_at: message.edited_at === null ? null : seconds(message.edited_at),
  });
}

/** A JSON array as stored text ("[]" for anything else). */
function jsonArray(text: string | null): string {
  try {
    const value = JSON.parse(text ?? "[]");
    return Array.isArray(value) ? JSON.stringify(value) : "[]";
  } catch {
    return "[]";
  }
}

/** A JSON object as stored text (null for anything else). */
function jsonObject(text: string | null): string | null {
  try {
    const value = JSON.parse(text ?? "null");
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? JSON.stringify(value)
      : null;
  } catch {
    return null;
  }
}
