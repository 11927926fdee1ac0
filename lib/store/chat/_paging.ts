/**
 * Paging through a table of the AgentChatBus dialect in a stable order
 * (agents, templates), after a place in that order.
 *
 * @module
 */

import type { Store } from "../types.ts";

/**
 * Rows of `table` in the order of its columns `at`, then `key`, after a
 * place in that order when given. Table and column names are this module's
 * own, never input.
 */
export function pageInOrder<Row extends object>(
  store: Store,
  order: { table: string; at: string; key: string },
  { limit, after }: { limit: number; after?: { at: number; key: string } | undefined },
): Row[] {
  const { table, at, key } = order;
  const sorted = `ORDER BY ${at}, ${key}`;
  if (!after) return store.stmt(`SELECT * FROM ${table} ${sorted} LIMIT ?`).all<Row>(limit);
  return store.stmt(
    `SELECT * FROM ${table} WHERE ${at} > ?1 OR (${at} = ?1 AND ${key} > ?2) ${sorted} LIMIT ?3`,
  ).all<Row>(after.at, after.key, limit);
}
