/**
 * The result of a chatbus tool: its structured content, and the same as
 * JSON text (AgentChatBus's clients parse the text; `defineTool` with
 * `textStyle: "json"` adds the warnings to both).
 *
 * @module
 */

import type { Warning } from "../../../errors.ts";
import type { ToolOutput } from "../../define_tool.ts";

/** `structured` as the result, with its JSON as the text. */
export function jsonResult<O>(structured: O, warnings?: Warning[]): ToolOutput<O> {
  return { structured, text: JSON.stringify(structured), warnings };
}

/**
 * One page of a list: `{[key]: items}`, and when more exist `has_more` and
 * `next_cursor`, with a warning that says so and how to get the rest.
 */
export function pageResult<K extends string, T>(
  key: K,
  page: Record<K, T[]> & { next_cursor: string | null; cut: boolean },
  tool: string,
): ToolOutput<Record<K, T[]> & { has_more?: boolean; next_cursor?: string | null }> {
  const items = page[key];
  const more = page.next_cursor !== null;
  const structured = {
    [key]: items,
    ...(more ? { has_more: true, next_cursor: page.next_cursor } : {}),
  } as Record<K, T[]> & { has_more?: boolean; next_cursor?: string | null };
  const warnings: Warning[] = more
    ? [{
      code: "TRUNCATED",
      message: `${items.length} ${key} are listed here` +
        (page.cut ? " (as many as fit one result, AGENT_BUS_TOOL_RESULT_MAX_BYTES)" : "") +
        `; more exist: call ${tool} again with cursor="${page.next_cursor}" for the next ones`,
      context: { returned: items.length, next_cursor: page.next_cursor },
    }]
    : [];
  return { structured, text: JSON.stringify(items), warnings };
}
