/**
 * A progress bar for long operations (export of a big topic, vacuum,
 * re-index). It draws on stderr only when stderr is a terminal, at most
 * ten times a second, and prints nothing at all when piped.
 *
 * @module
 */

import type { OutputStream } from "./format.ts";

const encoder = new TextEncoder();
const WIDTH = 30;

/** A running progress display. */
export interface Progress {
  /** Set how much is done (of `total`; without a total, a count is shown). */
  update(done: number): void;
  /** Clear the line. */
  finish(): void;
}

/** Start a progress display on `stream` labelled `label`, for `total` units (0 = unknown). */
export function startProgress(stream: OutputStream, label: string, total = 0): Progress {
  if (!stream.isTerminal()) return { update() {}, finish() {} };
  let last = 0;
  const draw = (done: number) => {
    const now = performance.now();
    if (now - last < 100 && done < total) return;
    last = now;
    const line = total > 0
      ? `${label} [${"#".repeat(Math.round((done / total) * WIDTH)).padEnd(WIDTH, " ")}] ` +
        `${Math.floor((done / total) * 100)}% (${done}/${total})`
      : `${label} … ${done}`;
    stream.writeSync(encoder.encode(`\r\x1b[2K${line}`));
  };
  draw(0);
  return {
    update: draw,
    finish() {
      stream.writeSync(encoder.encode("\r\x1b[2K"));
    },
  };
}
