/**
 * The result of a chatbus tool: its structured content, and the same as
 * JSON text (AgentChatBus's clients parse the text; `defineTool` with
 * `textStyle: "json"` adds the warnings to both).
 *
 * @module
 */

import { fitJson, truncatedWarning } from "../../../budget.ts";
import type { Warning } from "../../../errors.ts";
import type { ToolOutput } from "../../define_tool.ts";

/** `structured` as the result, with its JSON as the text. */
export function jsonResult<O>(structured: O, warnings?: Warning[]): ToolOutput<O> {
  return { structured, text: JSON.stringify(structured), warnings };
}

/**
 * A whole list as AgentChatBus answers it (a bare JSON array as the text,
 * `{[key]: items}` as the structured content), cut at the result `budget`:
 * then `has_more: true` and a warning saying how many were left out and
 * `hint` (what to do about it).
 */
export function listResult<K extends string, T>(
  key: K,
  all: readonly T[],
  options: { budget: number; hint: string },
): ToolOutput<Record<K, T[]> & { has_more?: boolean }> {
  const { items, cut } = fitJson(all, options.budget);
  const structured = { [key]: items, ...(cut ? { has_more: true } : {}) } as
    & Record<K, T[]>
    & { has_more?: boolean };
  const warnings = cut
    ? [truncatedWarning(all.length - items.length, options.budget, options.hint)]
    : [];
  return { structured, text: JSON.stringify(items), warnings };
}
