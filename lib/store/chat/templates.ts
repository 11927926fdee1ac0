/**
 * SQL for the custom thread templates of the AgentChatBus dialect
 * (`bus_templates`; the built-ins live in code).
 *
 * @module
 */

import type { Store } from "../types.ts";
import { pageInOrder } from "./_paging.ts";

/** A row of `bus_templates` (a custom template; the built-ins live in code). */
export interface TemplateRow {
  id: string;
  name: string;
  description: string | null;
  system_prompt: string | null;
  default_metadata_json: string | null;
  created_at: number;
}

/** Delete a custom template; false when there was none. */
export function deleteTemplate(store: Store, id: string): boolean {
  return Number(store.stmt("DELETE FROM bus_templates WHERE id = ?").run(id).changes) > 0;
}

/** Create or replace a custom template. */
export function putTemplate(store: Store, row: TemplateRow): void {
  store.stmt(
    `INSERT OR REPLACE INTO bus_templates (id, name, description, system_prompt,
       default_metadata_json, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id,
    row.name,
    row.description,
    row.system_prompt,
    row.default_metadata_json,
    row.created_at,
  );
}

/** A custom template. */
export function getTemplate(store: Store, id: string): TemplateRow | undefined {
  return store.stmt("SELECT * FROM bus_templates WHERE id = ?").get<TemplateRow>(id);
}

/** Custom templates, oldest first; with `after`, those after that place in the order. */
export function listTemplates(
  store: Store,
  limit: number,
  after?: { at: number; key: string },
): TemplateRow[] {
  const order = { table: "bus_templates", at: "created_at", key: "id" };
  return pageInOrder<TemplateRow>(store, order, { limit, after });
}
