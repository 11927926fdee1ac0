/**
 * All CLI output. stdout gets results (so they can be piped), stderr gets
 * diagnostics; nothing else in the program prints.
 *
 * @module
 */

const encoder = new TextEncoder();

/** Print a result line to stdout. */
export function out(text: string): void {
  Deno.stdout.writeSync(encoder.encode(text.endsWith("\n") ? text : text + "\n"));
}

/** Print a diagnostic line to stderr. */
export function err(text: string): void {
  Deno.stderr.writeSync(encoder.encode(text.endsWith("\n") ? text : text + "\n"));
}
