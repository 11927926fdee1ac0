/**
 * A helper process steered line by line: the test writes a line to its
 * stdin and reads its answers from its stdout, one line at a time (its
 * stderr goes to the test's). Used for the stall proxy and for the sessions
 * a test drives from inside a network namespace.
 *
 * @module
 */

import { inheritedEnv } from "./peer.ts";

/** A running steered process. */
export interface Steered {
  /** The next line it printed (without the newline). */
  next(): Promise<string>;
  /** Write one line to its stdin. */
  say(line: string): Promise<void>;
  /** Close its stdin, then wait for it to exit (killing it first when `kill`). */
  close(options?: { kill?: boolean }): Promise<void>;
}

/** Start `command` (its first element the program) with piped stdin and stdout. */
export function spawnSteered(command: string[]): Steered {
  const child = new Deno.Command(command[0]!, {
    args: command.slice(1),
    env: inheritedEnv(),
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const chunks = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  let buffered = "";
  return {
    async next() {
      while (!buffered.includes("\n")) {
        const { value, done } = await chunks.read();
        if (done) throw new Error(`${command.join(" ")} ended`);
        buffered += value;
      }
      const at = buffered.indexOf("\n");
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      return line.trim();
    },
    async say(line) {
      await writer.write(new TextEncoder().encode(`${line}\n`));
    },
    async close(options = {}) {
      await writer.close().catch(() => {});
      if (options.kill) child.kill("SIGKILL");
      await child.status;
      chunks.releaseLock();
      await child.stdout.cancel().catch(() => {});
    },
  };
}
