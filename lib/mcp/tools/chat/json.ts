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
