/**
 * Arguments checked against a zod schema, the same way on every surface:
 * an MCP tool's arguments, a REST route's query and body. A failure is one
 * `INVALID_ARGUMENT` sentence that names each bad field as the caller wrote
 * it (`outbox[0].content_markdown`), so a tool and its route refuse the same
 * input with the same words.
 *
 * @module
 */

import type { z } from "zod";
import { invalidArgument } from "./errors.ts";

/**
 * Parse `raw` with `schema`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` naming the bad fields
 */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidArgument(formatIssues(parsed.error.issues));
  return parsed.data;
}

/**
 * Turn zod issues into one sentence that names each bad field the way a
 * caller wrote it (`outbox[0].content_markdown`).
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  const parts = issues.slice(0, 5).map((issue) => {
    const path = formatPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((key) => `"${key}"`).join(", ");
      return `unknown argument${issue.keys.length > 1 ? "s" : ""} ${keys}${
        path ? ` in ${path}` : ""
      }`;
    }
    if (issue.code === "invalid_type" && / received undefined$/.test(issue.message)) {
      return `${path || "arguments"} is required`;
    }
    // Our own messages are phrases that follow the field name ("must be ..."); zod's are sentences.
    if (/^[a-z]/.test(issue.message)) return `${path} ${issue.message}`;
    const message = issue.message.replace(/^Invalid input: /, "");
    return `${path || "arguments"}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`;
  });
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : "";
  return `Invalid arguments: ${parts.join("; ")}${more}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    out += typeof key === "number" ? `[${key}]` : out ? `.${String(key)}` : String(key);
  }
  return out;
}
