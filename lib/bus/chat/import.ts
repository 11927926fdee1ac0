/**
 * `agent-bus db import-agentchatbus FILE`: an AgentChatBus database moved
 * onto the bus — its agents (keeping their ids and tokens, so they resume
 * as before; only the tokens' hashes are stored), custom templates, threads
 * (as topics, keeping their ids, states, summaries, system prompts, templates
 * and creators), and messages with their authors, roles, priorities,
 * replies, edits and reactions.
 *
 * The file is checked whole before anything is written: it must be a
 * regular SQLite file, and every row must be what the bus itself would
 * take (ids of 1–64 characters without control characters, used once;
 * every message in a thread of the file; metadata a JSON object within
 * `AGENT_BUS_MAX_METADATA_CHARS` and 32 levels; texts within their limits
 * and screened for credentials by `AGENT_BUS_SECRETS`; no message id that
 * the bus holds in another topic). The first row that is not is named in
 * the error, and nothing is imported. (A thread's name longer than the
 * bus's limit is cut to it, and an empty one named after its id.)
 *
 * Then it is written in short transactions: agents, templates, and each
 * thread a page of messages at a time (their search terms computed before
 * the page's transaction opens), renumbered 1, 2, 3… in their order
 * (AgentChatBus numbers messages across the whole bus; agent-bus numbers
 * them per topic, without gaps). So an import that stops halfway (a crash,
 * a full disk) is resumed by running it again: what the bus holds is kept
 * and counted as skipped, what is missing is added after it. At the end
 * every thread of the file is counted again on both sides, whether this run
 * wrote it or an earlier one did: every one of its messages must be in its
 * topic.
 *
 * @module
 */

import { BusError } from "../../errors.ts";
import {
  type AcbAgent,
  type AcbEdit,
  type AcbMessage,
  type AcbReaction,
  type AcbTemplate,
  type AcbThread,
  AgentChatBusFile,
  type MessageKey,
  type RowRef,
} from "../../store/chat/acb_file.ts";
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
} from "../../store/chat/mod.ts";
import { insertMessages, latestSeq, messageTopics, setNextSeq } from "../../store/messages.ts";
import { termsForSend } from "../../store/search.ts";
import { bumpTopicsVersion, getTopic, insertTopic } from "../../store/topics.ts";
import { type Bus, write } from "../mod.ts";
import { screenSecrets } from "../secrets.ts";
import { MAX_TOPIC_NAME_CHARS } from "../topics.ts";
import { MAX_METADATA_DEPTH } from "../validate.ts";
import { PRIORITIES, ROLES } from "./post.ts";
import { BUILTIN_TEMPLATES, THREAD_STATES } from "./threads.ts";
import { fromIso, hashSecret } from "./wire.ts";

/** Messages read and written per page (and per transaction). */
const PAGE = 500;
/** Longest id of a thread, message or agent. */
const MAX_ID_CHARS = 64;
/** Longest template id and name, author name, reaction, token, prompt (as the bus's tools). */
const MAX_TEMPLATE_ID_CHARS = 100;
const MAX_AUTHOR_CHARS = 200;
const MAX_REACTION_CHARS = 64;
const MAX_TOKEN_CHARS = 256;
const MAX_PROMPT_CHARS = 16384;
/** AgentChatBus's thread statuses: its states, and closed. */
const STATUSES: readonly string[] = [...THREAD_STATES, "closed"];
// deno-lint-ignore no-control-regex -- the point is to find control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

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

/** A thread of the file as it will be written, and how much of it the bus holds. */
interface ThreadPlan {
  thread: AcbThread & { id: string };
  name: string;
  state: string;
  metadataJson: string | null;
  systemPrompt: string | null;
  /** Its messages in the file. */
  count: number;
  /** How many of them the bus holds already (in this thread's topic). */
  present: number;
}

/**
 * Import the AgentChatBus database at `path` into `bus`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` when the file is not a regular SQLite file of
 *   AgentChatBus, or a row of it is not what the bus takes (nothing is imported then);
 *   `INTERNAL_ERROR` when a thread's messages are not all in the bus afterwards
 */
export async function importAgentChatBus(
  bus: Bus,
  path: string,
  onProgress: ImportProgress = () => {},
): Promise<ImportReport> {
  const file = new AgentChatBusFile(path);
  try {
    const plans = checkFile(bus, file);
    const report: ImportReport = {
      agents: await importAgents(bus, file.agents()),
      templates: await importTemplates(bus, file.templates()),
      threads: { found: plans.length, imported: 0, skipped: 0 },
      messages: { found: 0, imported: 0, skipped: 0 },
      edits: 0,
      reactions: 0,
    };
    const total = plans.reduce((sum, plan) => sum + plan.count, 0);
    let done = 0;
    onProgress(0, total);
    for (const plan of plans) {
      report.messages.found += plan.count;
      report.messages.skipped += plan.present;
      if (plan.present === plan.count && getTopicOf(bus, plan.thread.id)) {
        report.threads.skipped++;
        done += plan.count;
        onProgress(done, total);
        continue;
      }
      report.threads.imported++;
      await createTopic(bus, plan);
      await importMessages(bus, file, plan, report, (n) => {
        done += n;
        onProgress(done, total);
      });
    }
    verify(bus, file, plans);
    return report;
  } finally {
    file.close();
  }
}

// ------------------------------------------------------------------ checking

/** A row's problem, as the error that names it. */
function rowError(row: RowRef, problem: string): BusError {
  const id = typeof row.id === "string"
    ? JSON.stringify(row.id.length > 80 ? `${row.id.slice(0, 80)}…` : row.id)
    : row.id === null || row.id === undefined
    ? "with a NULL id"
    : `with the id ${JSON.stringify(String(row.id).slice(0, 80))}`;
  return new BusError(
    "INVALID_ARGUMENT",
    `Nothing was imported: ${row.table} row ${id}: ${problem}. Fix or remove that row in the ` +
      "file and run the import again",
    { context: { table: row.table } },
  );
}

/** Run `check`, naming `row` in any refusal it makes. */
function inRow<T>(row: RowRef, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof BusError) throw rowError(row, error.message);
    throw error;
  }
}

function refuse(problem: string): never {
  throw new BusError("INVALID_ARGUMENT", problem);
}

/** An id as the bus takes it: 1 to `max` characters, no control characters, no spaces around. */
function checkId(value: unknown, field: string, max = MAX_ID_CHARS): string {
  if (typeof value !== "string") refuse(`its ${field} is ${value === null ? "NULL" : "not text"}`);
  if (value === "") refuse(`its ${field} is empty`);
  if (value.length > max) refuse(`its ${field} has ${value.length} characters; the most is ${max}`);
  if (CONTROL.test(value) || value.trim() !== value) {
    refuse(`its ${field} holds control characters or spaces around it`);
  }
  return value;
}

/** Text of at most `max` characters, or null. */
function checkText(value: unknown, field: string, max: number): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") refuse(`its ${field} is not text`);
  if (value.length > max) refuse(`its ${field} has ${value.length} characters; the most is ${max}`);
  return value;
}

/** Text that must be there. */
function requireText(value: unknown, field: string, max: number): string {
  const text = checkText(value, field, max);
  if (text === null) refuse(`its ${field} is NULL`);
  return text;
}

/**
 * Stored metadata as the bus takes it: null, or the JSON text of an object
 * within the size limit and {@linkcode MAX_METADATA_DEPTH} levels (the depth
 * is read from the text, never by parsing something deeper).
 */
function checkMetadata(bus: Bus, value: unknown, field = "metadata"): string | null {
  const text = checkText(value, field, Number.MAX_SAFE_INTEGER);
  if (text === null || text.trim() === "" || text.trim() === "null") return null;
  const max = bus.config.maxMetadataChars;
  if (text.length > max) {
    refuse(`its ${field} is ${text.length} characters of JSON; the most is ${max}`);
  }
  if (jsonDepth(text) > MAX_METADATA_DEPTH) {
    refuse(`its ${field} nests deeper than ${MAX_METADATA_DEPTH} levels`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    refuse(`its ${field} is not JSON`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    refuse(`its ${field} is not a JSON object`);
  }
  return screenSecrets(JSON.stringify(parsed), { mode: bus.config.secrets, field });
}

/** The deepest nesting of brackets in JSON text, outside its strings. Linear. */
function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === "{" || char === "[") {
      deepest = Math.max(deepest, ++depth);
    } else if (char === "}" || char === "]") {
      depth--;
    }
  }
  return deepest;
}

/**
 * Every row of the file checked, and each thread's plan: how many of its
 * messages the bus already holds. Reads only; nothing is written.
 *
 * @throws {BusError} `INVALID_ARGUMENT` naming the first row the bus would not take
 */
function checkFile(bus: Bus, file: AgentChatBusFile): ThreadPlan[] {
  const fault = file.structuralFault();
  if (fault) throw rowError(fault.row, fault.problem);
  for (const agent of file.agents()) {
    inRow({ table: "agents", id: agent.id }, () => checkAgent(agent));
  }
  for (const template of file.templates()) {
    inRow({ table: "templates", id: template.id }, () => checkTemplate(bus, template));
  }
  const plans = file.threads().map((thread) =>
    inRow({ table: "threads", id: thread.id }, () => planThread(bus, thread))
  );
  for (const plan of plans) {
    for (const page of pages(file, plan.thread.id)) {
      for (const message of page) {
        inRow({ table: "messages", id: message.id }, () => checkMessage(bus, message));
      }
      const ids = page.map((m) => m.id);
      for (const edit of file.edits(ids)) {
        inRow({ table: "message_edits", id: edit.message_id }, () => checkEdit(bus, edit));
      }
      for (const reaction of file.reactions(ids)) {
        inRow({ table: "reactions", id: reaction.message_id }, () => checkReaction(reaction));
      }
      const held = bus.store.read(() => messageTopics(bus.store, ids));
      for (const [id, topicId] of held) {
        if (topicId !== plan.thread.id) {
          throw rowError(
            { table: "messages", id },
            `the bus holds a message with this id in another topic ("${topicId}")`,
          );
        }
      }
      plan.count += page.length;
      plan.present += held.size;
    }
  }
  return plans;
}

function planThread(bus: Bus, thread: AcbThread): ThreadPlan {
  const id = checkId(thread.id, "id");
  const topic = requireText(thread.topic, "topic", Number.MAX_SAFE_INTEGER).trim();
  if (CONTROL.test(topic)) refuse("its topic holds control characters");
  const status = requireText(thread.status, "status", 32);
  if (!STATUSES.includes(status)) {
    refuse(`its status "${status}" is not one of ${STATUSES.join(", ")}`);
  }
  checkText(thread.summary, "summary", MAX_PROMPT_CHARS);
  checkText(thread.template_id, "template_id", MAX_TEMPLATE_ID_CHARS);
  if (thread.creator_admin_id !== null) checkId(thread.creator_admin_id, "creator_admin_id");
  const prompt = checkText(thread.system_prompt, "system_prompt", MAX_PROMPT_CHARS);
  return {
    thread: { ...thread, id },
    name: topic.slice(0, MAX_TOPIC_NAME_CHARS) || `thread-${id}`,
    state: status === "closed" ? "discuss" : status,
    metadataJson: checkMetadata(bus, thread.metadata),
    systemPrompt: prompt === null
      ? null
      : screenSecrets(prompt, { mode: bus.config.secrets, field: "system_prompt" }),
    count: 0,
    present: 0,
  };
}

/** A message as it will be stored (its content and metadata screened). */
function checkMessage(
  bus: Bus,
  message: AcbMessage,
): { content: string; metadataJson: string | null } {
  checkId(message.id, "id");
  if (typeof message.seq !== "number" || !Number.isFinite(message.seq)) {
    refuse("its seq is not a number");
  }
  const author = requireText(message.author, "author", MAX_AUTHOR_CHARS);
  if (author.trim() === "" || CONTROL.test(author)) {
    refuse("its author is empty or holds control characters");
  }
  if (message.author_id !== null) checkId(message.author_id, "author_id");
  if (message.reply_to_msg_id !== null) checkId(message.reply_to_msg_id, "reply_to_msg_id");
  if (!(ROLES as readonly unknown[]).includes(message.role)) {
    refuse(`its role "${String(message.role).slice(0, 32)}" is not one of ${ROLES.join(", ")}`);
  }
  if (!(PRIORITIES as readonly unknown[]).includes(message.priority)) {
    refuse(`its priority is not one of ${PRIORITIES.join(", ")}`);
  }
  const version = message.edit_version;
  if (version !== null && (!Number.isSafeInteger(version) || version < 0)) {
    refuse("its edit_version is not a whole number");
  }
  const text = requireText(message.content, "content", bus.config.maxMessageChars);
  return {
    content: screenSecrets(text, { mode: bus.config.secrets, field: "content" }),
    metadataJson: checkMetadata(bus, message.metadata),
  };
}

/** An edit as it will be stored (the old content screened too). */
function checkEdit(bus: Bus, edit: AcbEdit): string {
  if (!Number.isSafeInteger(edit.version)) refuse("its version is not a whole number");
  requireText(edit.edited_by, "edited_by", MAX_AUTHOR_CHARS);
  const old = requireText(edit.old_content, "old_content", bus.config.maxMessageChars);
  return screenSecrets(old, { mode: bus.config.secrets, field: "old_content" });
}

function checkReaction(reaction: AcbReaction): void {
  const text = requireText(reaction.reaction, "reaction", MAX_REACTION_CHARS);
  if (text.trim() === "" || CONTROL.test(text)) {
    refuse("its reaction is empty or holds control characters");
  }
  if (reaction.agent_id !== null) checkId(reaction.agent_id, "agent_id");
}

function checkAgent(agent: AcbAgent): void {
  checkId(agent.id, "id");
  const token = requireText(agent.token, "token", MAX_TOKEN_CHARS);
  if (token === "") refuse("its token is empty");
  checkText(agent.name, "name", MAX_AUTHOR_CHARS);
  checkText(agent.display_name, "display_name", MAX_AUTHOR_CHARS);
  checkText(agent.description, "description", MAX_PROMPT_CHARS);
}

function checkTemplate(bus: Bus, template: AcbTemplate): string | null {
  checkId(template.id, "id", MAX_TEMPLATE_ID_CHARS);
  const name = requireText(template.name, "name", MAX_TEMPLATE_ID_CHARS);
  if (name.trim() === "") refuse("its name is empty");
  checkMetadata(bus, template.default_metadata, "default_metadata");
  const prompt = checkText(template.system_prompt, "system_prompt", MAX_PROMPT_CHARS);
  return prompt === null
    ? null
    : screenSecrets(prompt, { mode: bus.config.secrets, field: "system_prompt" });
}

/** A thread's messages of the file, a page at a time, in order. */
function* pages(file: AgentChatBusFile, threadId: string): Generator<AcbMessage[]> {
  for (let after: MessageKey = { seq: -Infinity, id: "" };;) {
    const page = file.messages(threadId, after, PAGE);
    if (page.length === 0) return;
    yield page;
    after = { seq: page.at(-1)!.seq, id: page.at(-1)!.id };
  }
}

// ------------------------------------------------------------------- writing

/** The time of an ISO date of AgentChatBus, in seconds (now when it cannot be read). */
function seconds(iso: unknown): number {
  return (typeof iso === "string" ? fromIso(iso) : undefined) ?? Date.now() / 1000;
}

function getTopicOf(bus: Bus, topicId: string) {
  return bus.store.read(() => getTopic(bus.store, topicId));
}

async function importAgents(bus: Bus, rows: AcbAgent[]): Promise<ImportCounts> {
  // (Hashing and parsing happen before the write transaction opens.)
  const agents = rows.map((agent) => ({
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

async function importTemplates(bus: Bus, rows: AcbTemplate[]): Promise<ImportCounts> {
  const templates = rows.map((template) => ({
    ...template,
    systemPrompt: checkTemplate(bus, template),
    metadataJson: checkMetadata(bus, template.default_metadata, "default_metadata"),
  }));
  const imported = await write(bus, () => {
    let n = 0;
    for (const template of templates) {
      const builtin = BUILTIN_TEMPLATES.some((t) => t.id === template.id);
      if (builtin || getTemplate(bus.store, template.id)) continue;
      putTemplate(bus.store, {
        id: template.id,
        name: template.name,
        description: template.description,
        system_prompt: template.systemPrompt,
        default_metadata_json: template.metadataJson,
        created_at: seconds(template.created_at),
      });
      n++;
    }
    return n;
  });
  return { found: templates.length, imported, skipped: templates.length - imported };
}

/** The thread's topic and thread rows, unless the bus has its topic already. */
async function createTopic(bus: Bus, plan: ThreadPlan): Promise<void> {
  const { thread } = plan;
  await write(bus, () => {
    if (getTopic(bus.store, thread.id)) return;
    const closed = thread.status === "closed";
    insertTopic(bus.store, {
      topic_id: thread.id,
      name: plan.name,
      created_at: seconds(thread.created_at),
      status: closed ? "closed" : "open",
      closed_at: closed ? seconds(thread.closed_at ?? thread.updated_at) : null,
      close_reason: closed ? thread.summary : null,
      metadata_json: plan.metadataJson,
    });
    putThread(bus.store, {
      topic_id: thread.id,
      state: plan.state,
      summary: thread.summary,
      system_prompt: plan.systemPrompt,
      template_id: thread.template_id,
      creator_admin_id: thread.creator_admin_id,
      creator_admin_name: thread.creator_admin_name,
      updated_at: seconds(thread.updated_at),
    });
    bumpTopicsVersion(bus.store);
  });
}

/** The thread's messages the bus does not hold yet, a page per transaction, after its last seq. */
async function importMessages(
  bus: Bus,
  file: AgentChatBusFile,
  plan: ThreadPlan,
  report: ImportReport,
  onPage: (messages: number) => void,
): Promise<void> {
  const topicId = plan.thread.id;
  for (const page of pages(file, topicId)) {
    const held = bus.store.read(() => messageTopics(bus.store, page.map((m) => m.id)));
    const missing = page.filter((m) => !held.has(m.id));
    const ids = missing.map((m) => m.id);
    // (Terms, screening and metadata are worked out before the write transaction opens.)
    const prepared = missing.map((message) => {
      const { content, metadataJson } = checkMessage(bus, message);
      return { message, content, metadataJson, terms: termsForSend(bus.store, content) };
    });
    const edits = file.edits(ids).map((edit) => ({ ...edit, old_content: checkEdit(bus, edit) }));
    const reactions = file.reactions(ids);
    if (prepared.length > 0) {
      await write(bus, () => {
        let seq = latestSeq(bus.store, topicId);
        for (const ready of prepared) writeMessage(bus, ready, ++seq);
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
        setNextSeq(bus.store, { topicId, next: seq + 1, now: bus.now() });
      }, { topics: [topicId] });
    }
    report.messages.imported += prepared.length;
    report.edits += edits.length;
    report.reactions += reactions.length;
    onPage(page.length);
  }
}

/** One message and its chat extras, at `seq` (inside the page's transaction). */
function writeMessage(
  bus: Bus,
  { message, content, metadataJson, terms }: {
    message: AcbMessage;
    content: string;
    metadataJson: string | null;
    terms: string;
  },
  seq: number,
): void {
  insertMessages(bus.store, [{
    message_id: message.id,
    topic_id: message.thread_id,
    seq,
    sender: message.author,
    message_type: "message",
    reply_to: message.reply_to_msg_id,
    content_markdown: content,
    metadata_json: metadataJson,
    client_message_id: null,
    created_at: seconds(message.created_at),
    terms,
  }]);
  insertChatExtras(bus.store, {
    message_id: message.id,
    author_id: message.author_id,
    role: message.role,
    priority: message.priority,
    edit_version: message.edit_version ?? 0,
    edited_at: message.edited_at === null ? null : seconds(message.edited_at),
  });
}

/**
 * Every thread of the file counted again: each of its messages must be in
 * its topic, whether this run or an earlier one wrote it.
 *
 * @throws {BusError} `INTERNAL_ERROR` naming the first thread that misses any
 */
function verify(bus: Bus, file: AgentChatBusFile, plans: readonly ThreadPlan[]): void {
  for (const plan of plans) {
    let held = 0;
    for (const page of pages(file, plan.thread.id)) {
      const topics = bus.store.read(() => messageTopics(bus.store, page.map((m) => m.id)));
      for (const topicId of topics.values()) if (topicId === plan.thread.id) held++;
    }
    const inFile = file.messageCount(plan.thread.id);
    if (held !== inFile || held !== plan.count || !getTopicOf(bus, plan.thread.id)) {
      throw new BusError(
        "INTERNAL_ERROR",
        `Thread ${JSON.stringify(plan.thread.id)}: ${held} of its ${inFile} messages are in ` +
          "the bus; run the import again to add the rest",
      );
    }
  }
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
