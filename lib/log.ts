/**
 * The stderr logger.
 *
 * stdout belongs to the MCP stdio channel: one stray byte there corrupts the
 * protocol stream, so every diagnostic goes through this module to stderr.
 * Every line passes through `redactSecrets` on its way out, so a database
 * URL's password never reaches a terminal or a client's log file.
 *
 * @module
 */

import type { LogLevel } from "./config.ts";
import { redactSecrets } from "./strings.ts";

/** A leveled logger; `context` is printed as JSON after the message. */
export interface Logger {
  debug(message: string, context?: Record<string, unknown>): void;
  info(message: string, context?: Record<string, unknown>): void;
  warn(message: string, context?: Record<string, unknown>): void;
  error(message: string, context?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/**
 * Create a logger that writes lines at or above `level`.
 *
 * @param level the lowest level to write
 * @param options `write` replaces stderr (tests), `name` prefixes each line
 */
export function createLogger(
  level: LogLevel,
  options: { write?: (line: string) => void; name?: string } = {},
): Logger {
  const encoder = new TextEncoder();
  const write = options.write ?? ((line: string) => Deno.stderr.writeSync(encoder.encode(line)));
  const name = options.name ?? "agent-bus";
  const emit = (at: LogLevel, message: string, context?: Record<string, unknown>): void => {
    if (RANK[at] < RANK[level]) return;
    const extra = context ? ` ${safeJson(context)}` : "";
    try {
      write(redactSecrets(`[${name}] ${at}: ${message}${extra}\n`));
    } catch {
      // stderr closed by the client: nothing sensible left to do with a log line.
    }
  };
  return {
    debug: (m, c) => emit("debug", m, c),
    info: (m, c) => emit("info", m, c),
    warn: (m, c) => emit("warn", m, c),
    error: (m, c) => emit("error", m, c),
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v) => v instanceof Error ? `${v.name}: ${v.message}` : v);
  } catch {
    return String(value);
  }
}

/**
 * Append `text` to the file at `path` (made 0600, private to its owner like
 * the database), first moving it to `path.1` once it holds `maxBytes`, so
 * that it stays within twice that. Never throws: a log file is a help, never
 * a failure.
 */
export function appendCapped(path: string, text: string, maxBytes: number): void {
  try {
    try {
      if (Deno.statSync(path).size >= maxBytes) Deno.renameSync(path, `${path}.1`);
    } catch { /* absent: created below */ }
    Deno.writeTextFileSync(path, text, { append: true, create: true, mode: 0o600 });
  } catch { /* an unwritable directory: the file is a help, never a failure */ }
}
