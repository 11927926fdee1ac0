/**
 * Small checks shared by the bus functions: names, free text and JSON
 * objects. Each throws `INVALID_ARGUMENT` naming the argument.
 *
 * @module
 */

import { invalidArgument } from "../errors.ts";

// deno-lint-ignore no-control-regex -- the point is to find control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Trim a name-like string and check it is non-blank, short enough and free
 * of control characters.
 *
 * @param field argument name used in the error
 */
export function cleanName(value: string, field: string, maxChars: number): string {
  const trimmed = value.trim();
  if (!trimmed) throw invalidArgument(`${field} must be a non-empty string`);
  if (trimmed.length > maxChars) {
    throw invalidArgument(`${field} exceeds max length (${maxChars})`);
  }
  if (CONTROL.test(trimmed)) throw invalidArgument(`${field} must not contain control characters`);
  return trimmed;
}

/** Trim optional free text: blank becomes null; too long is an error. */
export function cleanOptionalText(
  value: string | null | undefined,
  field: string,
  maxChars: number,
): string | null {
  const trimmed = value?.trim();
  if (!trimmed) return null;
  if (trimmed.length > maxChars) throw invalidArgument(`${field} exceeds max length (${maxChars})`);
  return trimmed;
}

/** Deepest nesting of arrays and objects accepted inside `metadata`. */
export const MAX_METADATA_DEPTH = 32;

/**
 * Serialize a metadata object, bounded in size and nesting.
 *
 * @returns the JSON text, or null for null/undefined
 */
export function metadataJson(
  value: Record<string, unknown> | null | undefined,
  field: string,
  maxChars: number,
): string | null {
  if (value === null || value === undefined) return null;
  return boundedJson(value, field, maxChars);
}

/** Parse stored metadata JSON back into an object (null when absent or unreadable). */
export function parseMetadata(json: string | null): Record<string, unknown> | null {
  if (json === null) return null;
  try {
    const value = JSON.parse(json);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Serialize any JSON value (a peer-bus message body), bounded in size and
 * nesting.
 */
export function jsonValue(value: unknown, field: string, maxChars: number): string {
  if (value === undefined) throw invalidArgument(`${field} is required`);
  return boundedJson(value, field, maxChars);
}

function boundedJson(value: unknown, field: string, maxChars: number): string {
  if (depthOf(value) > MAX_METADATA_DEPTH) {
    throw invalidArgument(`${field} nests deeper than ${MAX_METADATA_DEPTH} levels`);
  }
  const json = JSON.stringify(value);
  if (json.length > maxChars) {
    throw invalidArgument(`${field} exceeds max size (${maxChars} characters of JSON)`);
  }
  return json;
}

/** Nesting depth of a JSON value, without recursion (so hostile input cannot overflow the stack). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_METADATA_DEPTH) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}
