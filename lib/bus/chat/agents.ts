/**
 * Chatbus agents (seed 002, "Agent Identity & Presence"): registration
 * with an id and a secret token, resume, heartbeat, profile updates and
 * the online rule.
 *
 * An agent is online while it waits in `msg_wait` or has been heard from
 * (heartbeat or any activity) within {@linkcode ONLINE_WINDOW_SECONDS}.
 * Waiting counts without any write: AgentChatBus re-stamps a waiting
 * agent's heartbeat every 40 s, we read its wait row instead.
 *
 * @module
 */

import { BusError, invalidArgument } from "../../errors.ts";
import {
  activeEmojis,
  type AgentChanges,
  agentNameTaken,
  type AgentRow,
  agentWaitTopics,
  deleteAgent,
  exitAgentWaits,
  getAgent,
  insertAgent,
  KICKED_ACTIVITY,
  listAgents,
  touchAgent,
  updateAgent,
  waitingAgentIds,
} from "../../store/chat/mod.ts";
import { recordChatEvent } from "../../store/chat/events.ts";
import { fitJson } from "../../budget.ts";
import { clearWaiting } from "../../store/cursors.ts";
import type { Store } from "../../store/mod.ts";
import { encodeCursor, parseCursor } from "../cursor.ts";
import { type Bus, write } from "../mod.ts";
import { cleanName, cleanOptionalText, jsonValue } from "../validate.ts";
import { hashSecret, iso, newAgentToken } from "./wire.ts";

/** An agent not heard from for this long is offline (AgentChatBus TS: 60 s). */
export const ONLINE_WINDOW_SECONDS = 60;
/** Longest ide, model, display name or capability tag. */
const MAX_LABEL_CHARS = 100;
/** Longest description. */
const MAX_DESCRIPTION_CHARS = 2000;
/** Most capability tags or skills. */
const MAX_TAGS = 50;
/** Most agents one listing returns. */
const MAX_AGENT_LIST = 1000;
/** Most agents on one page of `agent_list` (the result budget may cut it shorter). */
const AGENT_PAGE = 200;

/** Emoji avatars and their labels (the auto display name is "IDE label"). */
const AVATARS: readonly (readonly [string, string])[] = [
  ["🦊", "Fox"],
  ["🐙", "Octopus"],
  ["🦉", "Owl"],
  ["🐝", "Bee"],
  ["🐢", "Turtle"],
  ["🦋", "Butterfly"],
  ["🐬", "Dolphin"],
  ["🦁", "Lion"],
  ["🐧", "Penguin"],
  ["🦜", "Parrot"],
  ["🌵", "Cactus"],
  ["🌻", "Sunflower"],
  ["🍄", "Mushroom"],
  ["🍋", "Lemon"],
  ["🍉", "Melon"],
  ["🥨", "Pretzel"],
  ["🔧", "Wrench"],
  ["🧭", "Compass"],
  ["🔭", "Telescope"],
  ["🧲", "Magnet"],
  ["🪁", "Kite"],
  ["🎲", "Dice"],
  ["🧠", "Brain"],
  ["🔒", "Lock"],
];

/** One emoji (with its joiners and variation selectors). */
const EMOJI =
  /^\p{Extended_Pictographic}(?:\uFE0F|\u200D\p{Extended_Pictographic}|\p{Emoji_Modifier})*$/u;

/** An agent as tools list it: never its token. */
export interface AgentInfo {
  agent_id: string;
  name: string;
  display_name: string;
  ide: string;
  model: string;
  emoji: string;
  alias_source: "user" | "auto";
  description: string;
  is_online: boolean;
  capabilities: string[];
  skills: Record<string, unknown>[];
  registered_at: string;
  last_heartbeat: string;
  last_activity: string;
  last_activity_time: string;
}

/** What registering takes (seed: ide and model required; the rest optional). */
export interface RegisterArgs {
  ide?: string | undefined;
  model?: string | undefined;
  description?: string | undefined;
  display_name?: string | undefined;
  emoji?: string | undefined;
  capabilities?: string[] | undefined;
  skills?: Record<string, unknown>[] | undefined;
}

/** A registered agent and its secret (shown once). */
export interface Registered {
  agent: AgentInfo;
  token: string;
}

/** Register a new agent. Blank ide/model fall back to defaults, as in AgentChatBus. */
export async function registerAgent(bus: Bus, args: RegisterArgs): Promise<Registered> {
  const ide = cleanOptionalText(args.ide, "ide", MAX_LABEL_CHARS) ?? "CLI";
  const model = cleanOptionalText(args.model, "model", MAX_LABEL_CHARS) ?? "unknown";
  const profile = profileFields(bus, args);
  const explicitEmoji = validEmoji(args.emoji);
  const token = newAgentToken();
  const tokenHash = hashSecret(token);
  const row = await write(bus, () => {
    const now = bus.now();
    const agentId = crypto.randomUUID();
    const base = `${ide} (${model})`;
    let name = base;
    for (let n = 2; agentNameTaken(bus.store, name); n++) name = `${base} ${n}`;
    const avatar = pickAvatar(bus.store, `${ide}|${model}`, now);
    const row: AgentRow = {
      agent_id: agentId,
      name,
      display_name: profile.display_name ?? null,
      ide,
      model,
      description: profile.description ?? "",
      capabilities_json: profile.capabilities_json ?? "[]",
      skills_json: profile.skills_json ?? "[]",
      emoji: explicitEmoji ?? avatar[0],
      token_hash: tokenHash,
      registered_at: now,
      last_heartbeat: now,
      last_activity: "registered",
      last_activity_time: now,
    };
    insertAgent(bus.store, row);
    agentEvent(bus, "agent.online", agentId);
    return row;
  });
  return { agent: agentInfo(bus, row), token };
}

/**
 * The agent these credentials belong to.
 *
 * @throws {BusError} `code` (default `AUTHENTICATION_REQUIRED`) when they match no agent
 */
export function authenticate(
  store: Store,
  agentId: string,
  token: string,
  code: "AUTHENTICATION_REQUIRED" | "InvalidCredentials" = "AUTHENTICATION_REQUIRED",
): AgentRow {
  const row = agentId.length <= 64 ? getAgent(store, agentId) : undefined;
  if (!row || token.length > 256 || row.token_hash !== hashSecret(token)) {
    throw new BusError(code, "Invalid agent_id/token");
  }
  return row;
}

/** Resume with saved credentials: same identity, marked active. */
export async function resumeAgent(bus: Bus, agentId: string, token: string): Promise<AgentInfo> {
  const row = await write(bus, () => {
    const row = authenticate(bus.store, agentId, token);
    touchAgent(bus.store, { agentId, activity: "resume", now: bus.now(), heartbeat: true });
    agentEvent(bus, "agent.updated", agentId);
    return getAgent(bus.store, row.agent_id)!;
  });
  return agentInfo(bus, row);
}

/** A heartbeat; false on wrong credentials. */
export async function heartbeat(bus: Bus, agentId: string, token: string): Promise<boolean> {
  return await write(bus, () => {
    if (!credentialsMatch(bus.store, agentId, token)) return false;
    touchAgent(bus.store, { agentId, activity: "heartbeat", now: bus.now(), heartbeat: true });
    agentEvent(bus, "agent.updated", agentId);
    return true;
  });
}

/** Leave the bus; false on wrong credentials. */
export async function unregisterAgent(bus: Bus, agentId: string, token: string): Promise<boolean> {
  return await write(bus, () => {
    if (!credentialsMatch(bus.store, agentId, token)) return false;
    deleteAgent(bus.store, agentId);
    agentEvent(bus, "agent.offline", agentId);
    return true;
  });
}

/** Change only the given profile fields; undefined on wrong credentials. */
export async function updateAgentProfile(
  bus: Bus,
  agentId: string,
  token: string,
  args: Omit<RegisterArgs, "ide" | "model">,
): Promise<AgentInfo | undefined> {
  const changes: AgentChanges = profileFields(bus, args);
  // An empty display name clears the alias: the auto name shows again.
  if (args.display_name !== undefined && !args.display_name.trim()) changes.display_name = null;
  if (args.emoji !== undefined) changes.emoji = validEmoji(args.emoji);
  const row = await write(bus, () => {
    if (!credentialsMatch(bus.store, agentId, token)) return undefined;
    updateAgent(bus.store, { agentId, changes });
    touchAgent(bus.store, { agentId, activity: "update", now: bus.now() });
    agentEvent(bus, "agent.updated", agentId);
    return getAgent(bus.store, agentId);
  });
  return row && agentInfo(bus, row);
}

/** What forcing an agent offline did. */
export interface Kicked {
  agent: AgentInfo;
  /** The threads whose `msg_wait` by this agent ended. */
  threadsInterrupted: string[];
}

/**
 * Force an agent offline (AgentChatBus's kick): its waits in `msg_wait`
 * end at once (they return what a timeout returns, with an `AGENT_KICKED`
 * warning) and it shows offline until its next call. Its token stays
 * valid: each agent's session is its own process, which the bus does not
 * cut.
 *
 * @returns undefined when no such agent is registered
 */
export async function kickAgent(bus: Bus, agentId: string): Promise<Kicked | undefined> {
  if (agentId.length > 64) return undefined;
  // The threads it waits in are read first: the write names them, so their waiters wake.
  const topics = bus.store.read(() => agentWaitTopics(bus.store, agentId));
  const row = await write(bus, () => {
    const row = getAgent(bus.store, agentId);
    if (!row) return undefined;
    exitAgentWaits(bus.store, agentId);
    for (const topicId of topics) clearWaiting(bus.store, { topicId, agentName: row.name });
    touchAgent(bus.store, { agentId, activity: KICKED_ACTIVITY, now: bus.now() });
    agentEvent(bus, "agent.updated", agentId);
    return getAgent(bus.store, agentId)!;
  }, { topics });
  return row && { agent: agentInfo(bus, row, new Set()), threadsInterrupted: topics };
}

/**
 * Journal an agent's change (inside its write) for AgentChatBus's event
 * stream: `agent.online` (registered), `agent.updated`, `agent.offline` (gone).
 */
function agentEvent(
  bus: Bus,
  kind: "agent.online" | "agent.updated" | "agent.offline",
  agentId: string,
): void {
  recordChatEvent(bus.store, { kind, ref: agentId, topicId: null, now: bus.now() });
}

/** Whether an operator forced the agent offline since its last call. */
export function isKicked(store: Store, agentId: string): boolean {
  return getAgent(store, agentId)?.last_activity === KICKED_ACTIVITY;
}

/** One registered agent, without its token, or undefined. */
export function findAgent(bus: Bus, agentId: string): AgentInfo | undefined {
  const row = agentId.length <= 64 ? bus.store.read(() => getAgent(bus.store, agentId)) : undefined;
  return row && agentInfo(bus, row);
}

/** Every registered agent, without tokens. */
export function agentList(bus: Bus): AgentInfo[] {
  const [rows, waiting] = bus.store.read(() =>
    [listAgents(bus.store, MAX_AGENT_LIST), waitingNow(bus)] as const
  );
  return rows.map((row) => agentInfo(bus, row, waiting));
}

/** One page of `agent_list`: in the order agents registered, after `cursor`. */
export interface AgentPage {
  agents: AgentInfo[];
  /** Pass as `cursor` for the agents after these; null when there are none. */
  next_cursor: string | null;
  /** Some were left out because the result would be larger than `budget`. */
  cut: boolean;
}

/**
 * Agents in the order they registered, after `cursor` (an earlier page's
 * `next_cursor`), as many as fit `budget` bytes of JSON.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a cursor that is not one
 */
export function agentPage(
  bus: Bus,
  { cursor, budget }: { cursor?: string | undefined; budget: number },
): AgentPage {
  const after = cursor === undefined ? undefined : parseCursor(cursor, "agent_list");
  const [rows, waiting] = bus.store.read(() =>
    [listAgents(bus.store, AGENT_PAGE + 1, after), waitingNow(bus)] as const
  );
  const { items, cut } = fitJson(
    rows.slice(0, AGENT_PAGE).map((row) => agentInfo(bus, row, waiting)),
    budget,
  );
  const last = rows[items.length - 1];
  const more = cut || rows.length > AGENT_PAGE;
  return {
    agents: items,
    next_cursor: more && last ? encodeCursor(last.registered_at, last.agent_id) : null,
    cut,
  };
}

/**
 * An agent row as tools show it.
 *
 * @param waiting the agents waiting in `msg_wait` now (read here when not given)
 */
export function agentInfo(
  bus: Bus,
  row: AgentRow,
  waiting: ReadonlySet<string> = bus.store.read(() => waitingNow(bus)),
): AgentInfo {
  const now = bus.now();
  const online = row.last_activity !== KICKED_ACTIVITY &&
    (Math.max(row.last_heartbeat, row.last_activity_time) >= now - ONLINE_WINDOW_SECONDS ||
      waiting.has(row.agent_id));
  return {
    agent_id: row.agent_id,
    name: row.name,
    display_name: displayName(row),
    ide: row.ide,
    model: row.model,
    emoji: row.emoji,
    alias_source: row.display_name ? "user" : "auto",
    description: row.description,
    is_online: online,
    capabilities: JSON.parse(row.capabilities_json),
    skills: JSON.parse(row.skills_json),
    registered_at: iso(row.registered_at),
    last_heartbeat: iso(row.last_heartbeat),
    last_activity: row.last_activity,
    last_activity_time: iso(row.last_activity_time),
  };
}

function waitingNow(bus: Bus): Set<string> {
  return new Set(waitingAgentIds(bus.store, bus.now()));
}

/** The name people see: the agent's alias, or "IDE Avatar" from its emoji. */
export function displayName(row: AgentRow): string {
  if (row.display_name) return row.display_name;
  const label = AVATARS.find(([emoji]) => emoji === row.emoji)?.[1] ?? "Agent";
  return `${row.ide} ${label}`;
}

function credentialsMatch(store: Store, agentId: string, token: string): boolean {
  try {
    authenticate(store, agentId, token);
    return true;
  } catch {
    return false;
  }
}

function profileFields(bus: Bus, args: Omit<RegisterArgs, "ide" | "model">): AgentChanges {
  const limit = bus.config.maxMetadataChars;
  const capabilities = args.capabilities;
  if (capabilities && capabilities.length > MAX_TAGS) {
    throw invalidArgument(`capabilities has ${capabilities.length} tags; the most is ${MAX_TAGS}`);
  }
  const skills = args.skills;
  if (skills && skills.length > MAX_TAGS) {
    throw invalidArgument(`skills has ${skills.length} entries; the most is ${MAX_TAGS}`);
  }
  for (const [index, skill] of (skills ?? []).entries()) {
    if (typeof skill.id !== "string" || typeof skill.name !== "string") {
      throw invalidArgument(`skills[${index}] needs string fields id and name`);
    }
  }
  return {
    display_name: args.display_name === undefined
      ? undefined
      : cleanOptionalText(args.display_name, "display_name", MAX_LABEL_CHARS),
    description: args.description === undefined
      ? undefined
      : cleanOptionalText(args.description, "description", MAX_DESCRIPTION_CHARS) ?? "",
    capabilities_json: capabilities === undefined ? undefined : jsonValue(
      capabilities.map((tag, i) => cleanName(tag, `capabilities[${i}]`, MAX_LABEL_CHARS)),
      "capabilities",
      limit,
    ),
    skills_json: skills === undefined ? undefined : jsonValue(skills, "skills", limit),
  };
}

/** An explicit emoji if it is one (else undefined: the deterministic one is used). */
function validEmoji(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed && trimmed.length <= 16 && EMOJI.test(trimmed) ? trimmed : undefined;
}

/** The avatar for `seed`, skipping ones that agents online now already show. */
function pickAvatar(store: Store, seed: string, now: number): readonly [string, string] {
  const taken = new Set(activeEmojis(store, now - ONLINE_WINDOW_SECONDS));
  const start = parseInt(hashSecret(seed).slice(0, 8), 16) % AVATARS.length;
  for (let i = 0; i < AVATARS.length; i++) {
    const avatar = AVATARS[(start + i) % AVATARS.length]!;
    if (!taken.has(avatar[0])) return avatar;
  }
  return AVATARS[start]!;
}
