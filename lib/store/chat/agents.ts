/**
 * SQL for the registered agents of the AgentChatBus dialect
 * (`bus_agents`): their rows, names, emojis and activity. Agent tokens are
 * stored only as SHA-256 hashes.
 *
 * @module
 */

import type { Store } from "../types.ts";
import { pageInOrder } from "./_paging.ts";
import { exitAgentWaits } from "./waits.ts";

/** A row of `bus_agents`. */
export interface AgentRow {
  agent_id: string;
  name: string;
  display_name: string | null;
  ide: string;
  model: string;
  description: string;
  capabilities_json: string;
  skills_json: string;
  emoji: string;
  token_hash: string;
  registered_at: number;
  last_heartbeat: number;
  last_activity: string;
  last_activity_time: number;
}

/** Insert a registered agent. */
export function insertAgent(store: Store, row: AgentRow): void {
  store.stmt(
    `INSERT INTO bus_agents (agent_id, name, display_name, ide, model, description,
       capabilities_json, skills_json, emoji, token_hash, registered_at, last_heartbeat,
       last_activity, last_activity_time)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.agent_id,
    row.name,
    row.display_name,
    row.ide,
    row.model,
    row.description,
    row.capabilities_json,
    row.skills_json,
    row.emoji,
    row.token_hash,
    row.registered_at,
    row.last_heartbeat,
    row.last_activity,
    row.last_activity_time,
  );
}

/** The statement of {@linkcode getAgent}, for a batch of reads (`Store.gather`). */
export const GET_AGENT_SQL = "SELECT * FROM bus_agents WHERE agent_id = ?";

/** The agent with this id. */
export function getAgent(store: Store, agentId: string): AgentRow | undefined {
  return store.stmt(GET_AGENT_SQL).get(agentId) as
    | AgentRow
    | undefined;
}

/** True when an agent already uses this internal name. */
export function agentNameTaken(store: Store, name: string): boolean {
  return store.stmt("SELECT 1 FROM bus_agents WHERE name = ?").get(name) !== undefined;
}

/** Every agent, oldest registration first; with `after`, those after that place in the order. */
export function listAgents(
  store: Store,
  limit: number,
  after?: { at: number; key: string },
): AgentRow[] {
  const order = { table: "bus_agents", at: "registered_at", key: "agent_id" };
  return pageInOrder<AgentRow>(store, order, { limit, after });
}

/** Emojis of agents active since `since` (so a new agent can pick another). */
export function activeEmojis(store: Store, since: number): string[] {
  return (store.stmt(
    "SELECT emoji FROM bus_agents WHERE MAX(last_heartbeat, last_activity_time) >= ?",
  ).all<{ emoji: string }>(since)).map((row) => row.emoji);
}

/** Record what an agent just did (and, for a heartbeat, its heartbeat). */
export function touchAgent(
  store: Store,
  { agentId, activity, now, heartbeat }: {
    agentId: string;
    activity: string;
    now: number;
    heartbeat?: boolean;
  },
): void {
  // A repeat of the same activity within a second is not written again (a busy poster's
  // presence is current enough, and its post dirties one page fewer).
  store.stmt(
    `UPDATE bus_agents SET last_activity = ?1, last_activity_time = ?2,
       last_heartbeat = CASE WHEN ?3 <> 0 THEN ?2 ELSE last_heartbeat END
     WHERE agent_id = ?4 AND (last_activity <> ?1 OR last_activity_time < ?2 - 1
       OR (?3 <> 0 AND last_heartbeat < ?2 - 1))`,
  ).run(activity, now, heartbeat ? 1 : 0, agentId);
}

/** Fields an agent may change after registering (undefined: keep). */
export interface AgentChanges {
  display_name?: string | null | undefined;
  description?: string | undefined;
  capabilities_json?: string | undefined;
  skills_json?: string | undefined;
  emoji?: string | undefined;
}

/** Change the given fields of an agent. */
export function updateAgent(
  store: Store,
  { agentId, changes }: { agentId: string; changes: AgentChanges },
): void {
  const columns = Object.entries(changes).filter(([, value]) => value !== undefined);
  if (columns.length === 0) return;
  // Column names come from AgentChanges' keys, never from input.
  store.stmt(
    `UPDATE bus_agents SET ${columns.map(([column]) => `${column} = ?`).join(", ")}
     WHERE agent_id = ?`,
  ).run(...columns.map(([, value]) => value as string | null), agentId);
}

/** An agent's last activity after an operator forced it offline: offline until it acts again. */
export const KICKED_ACTIVITY = "kicked";

/** Remove an agent and its wait states. */
export function deleteAgent(store: Store, agentId: string): void {
  store.stmt("DELETE FROM bus_agents WHERE agent_id = ?").run(agentId);
  exitAgentWaits(store, agentId);
}
