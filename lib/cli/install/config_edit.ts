/**
 * Adding and removing one server in a client's config file without
 * touching anything else in it. JSON files (which several clients allow to
 * carry comments and trailing commas) are edited in place with
 * `jsonc-parser`, VS Code's own: comments, order and the other servers
 * survive. TOML (Codex) is edited as text, our one table replaced or
 * appended, and the result checked with a real TOML parser before it is
 * written.
 *
 * @module
 */

import {
  applyEdits,
  modify,
  parse as parseJsonc,
  type ParseError,
  printParseErrorCode,
} from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { ConfigSyntaxError } from "./config_error.ts";

/** A file's text after an edit, and whether anything changed. */
export interface Edited {
  text: string;
  changed: boolean;
  /** The entry that was there before, if any. */
  previous: unknown;
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } };

/** Parse a JSON (with comments) config; an empty file is `{}`. */
export function readJsonConfig(path: string, text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const errors: ParseError[] = [];
  const value = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    throw new ConfigSyntaxError(
      path,
      `${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigSyntaxError(path, "the top level is not an object");
  }
  return value as Record<string, unknown>;
}

/** Parse a TOML config; an empty file is `{}`. */
export function readTomlConfig(path: string, text: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigSyntaxError(
      path,
      error instanceof Error ? error.message.split("\n")[0]! : String(error),
    );
  }
}

function lookup(value: unknown, keys: string[]): unknown {
  let at = value;
  for (const key of keys) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** Set (or with `entry` undefined, remove) `serversKey.name` in a JSON config. */
export function editJson(
  path: string,
  text: string,
  keys: { serversKey: string[]; name: string },
  entry: unknown,
  skeleton: Record<string, unknown> = {},
): Edited {
  return updateJson(path, text, [...keys.serversKey, keys.name], () => entry, skeleton);
}

/**
 * Replace the value at `keyPath` in a JSON config with `update(current)`
 * (undefined removes it), leaving the rest of the file as it was.
 */
export function updateJson(
  path: string,
  text: string,
  keyPath: string[],
  update: (current: unknown) => unknown,
  skeleton: Record<string, unknown> = {},
): Edited {
  const previous = lookup(readJsonConfig(path, text), keyPath);
  const value = update(previous);
  if (JSON.stringify(previous) === JSON.stringify(value)) return { text, changed: false, previous };
  let next = text.trim() === "" ? `${JSON.stringify(skeleton, null, 2)}\n` : text;
  next = applyEdits(next, modify(next, keyPath, value, FORMAT));
  readJsonConfig(path, next); // never write what we could not read back
  return { text: next, changed: true, previous };
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const tomlKey = (key: string) => BARE_KEY.test(key) ? key : JSON.stringify(key);
const tomlValue = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{ ${
      Object.entries(value).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`).join(", ")
    } }`;
  }
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
};

/** Set (or with `entry` undefined, remove) `[serversKey.name]` in a TOML config. */
export function editToml(
  path: string,
  text: string,
  keys: { serversKey: string[]; name: string },
  entry: Record<string, unknown> | undefined,
): Edited {
  const current = readTomlConfig(path, text);
  const previous = lookup(current, [...keys.serversKey, keys.name]);
  if (JSON.stringify(previous) === JSON.stringify(entry)) return { text, changed: false, previous };
  if (entry === undefined && previous === undefined) return { text, changed: false, previous };
  const header = [...keys.serversKey, keys.name].map(tomlKey).join(".");
  const ours = new RegExp(`^\\s*\\[\\s*${escapeRegExp(header)}\\s*(\\.[^\\]]*)?\\]\\s*(#.*)?$`);
  const anyHeader = /^\s*\[/;
  const kept: string[] = [];
  let inOurs = false;
  for (const line of text.split("\n")) {
    if (anyHeader.test(line)) inOurs = ours.test(line);
    if (!inOurs) kept.push(line);
  }
  let next = kept.join("\n").replace(/\n{3,}$/, "\n\n").trimEnd();
  if (entry !== undefined) {
    const body = Object.entries(entry).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`).join(
      "\n",
    );
    next = `${next}${next ? "\n\n" : ""}[${header}]\n${body}`;
  }
  next = next ? `${next}\n` : "";
  const after = lookup(readTomlConfig(path, next), [...keys.serversKey, keys.name]);
  if (JSON.stringify(after) !== JSON.stringify(entry)) {
    throw new ConfigSyntaxError(
      path,
      `"${header}" is defined in a form this command does not edit (inline)`,
    );
  }
  return { text: next, changed: true, previous };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
