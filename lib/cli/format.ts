/**
 * All CLI output. stdout gets results (so they can be piped), stderr gets
 * diagnostics and progress; nothing else in the program prints. Colours
 * appear only on a terminal and never with NO_COLOR set. A reader that
 * goes away (`agent-bus export … | head`) ends the command quietly: the
 * write throws {@linkcode ReaderGone} and the dispatcher exits with 0.
 * Diagnostics pass through `redactSecrets`: an error that quotes a database
 * URL never shows its password.
 *
 * @module
 */

import { redactSecrets } from "../strings.ts";

const encoder = new TextEncoder();

/** Somewhere output goes: `Deno.stdout`, `Deno.stderr`, or a test's buffer. */
export interface OutputStream {
  writeSync(bytes: Uint8Array): number;
  isTerminal(): boolean;
}

/** The standard streams a command reads and writes. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: { readonly readable: ReadableStream<Uint8Array>; isTerminal(): boolean };
}

/** The process's own streams. */
export const PROCESS_IO: CliIo = { stdout: Deno.stdout, stderr: Deno.stderr, stdin: Deno.stdin };

/** stdout or stderr was closed by its reader: stop writing, nothing failed. */
export class ReaderGone extends Error {
  constructor() {
    super("The reader closed the output");
    this.name = "ReaderGone";
  }
}

function writeAll(stream: OutputStream, text: string): void {
  const bytes = encoder.encode(text.endsWith("\n") ? text : text + "\n");
  try {
    for (let done = 0; done < bytes.length;) done += stream.writeSync(bytes.subarray(done));
  } catch (error) {
    throw error instanceof Deno.errors.BrokenPipe ? new ReaderGone() : error;
  }
}

/** How a command prints: results to stdout, diagnostics to stderr. */
export interface Printer {
  /** Print a result line to stdout. */
  out(text: string): void;
  /** Print a diagnostic line to stderr, secrets redacted. */
  err(text: string): void;
  /** Print a value as indented JSON to stdout. */
  json(value: unknown): void;
  /** Styling for stdout (or stderr): on only for a terminal and without NO_COLOR. */
  style(stream?: "stdout" | "stderr"): Style;
}

/** A {@linkcode Printer} over `io`; `noColor` switches styling off everywhere. */
export function createPrinter(io: CliIo, noColor: boolean): Printer {
  return {
    out: (text) => writeAll(io.stdout, text),
    err: (text) => writeAll(io.stderr, redactSecrets(text)),
    json: (value) => writeAll(io.stdout, JSON.stringify(value, null, 2)),
    style: (stream = "stdout") =>
      createStyle(!noColor && (stream === "stderr" ? io.stderr : io.stdout).isTerminal()),
  };
}

/** ANSI styling that switches itself off when it should. */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  /** A colour that is always the same for the same name (senders in `watch`). */
  byName(name: string, text?: string): string;
}

const NAME_COLOURS = [36, 35, 33, 32, 34, 31, 96, 95, 93, 92, 94, 91];

function createStyle(enabled: boolean): Style {
  const sgr = (code: number) => (text: string) => enabled ? `\x1b[${code}m${text}\x1b[0m` : text;
  return {
    enabled,
    bold: sgr(1),
    dim: sgr(2),
    red: sgr(31),
    green: sgr(32),
    yellow: sgr(33),
    byName(name, text = name) {
      let hash = 0;
      for (const char of name) hash = (hash * 31 + char.codePointAt(0)!) >>> 0;
      return sgr(NAME_COLOURS[hash % NAME_COLOURS.length]!)(text);
    },
  };
}

/** Rows as aligned columns under a header (widths ignore ANSI codes). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  // deno-lint-ignore no-control-regex -- ANSI colour codes take no room on screen
  const visible = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "").length;
  const widths = header.map((h, i) =>
    Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? "")))
  );
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) =>
      i === cells.length - 1 ? cell : cell + " ".repeat(widths[i]! - visible(cell))
    )
      .join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** "just now", "42s ago", "5m ago", "3h ago", "2d ago". */
export function ago(unixSeconds: number | null, now = Date.now() / 1000): string {
  if (unixSeconds === null) return "never";
  const seconds = Math.max(0, Math.round(now - unixSeconds));
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/** A byte count for people: 512 B, 1.5 KiB, 20.3 MiB. */
export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = count / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Local time of a unix timestamp as `YYYY-MM-DD HH:MM:SS`. */
export function localTime(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
