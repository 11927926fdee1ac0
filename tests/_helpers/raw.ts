/**
 * A server process with byte-level access to its stdin and line-level
 * access to its stdout, for tests of the stdio wire format itself.
 *
 * @module
 */

import { serverCommand } from "./peer.ts";
import { storeLocation } from "./store.ts";

/** `initialize` params of a hand-written client. */
export const INIT_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "0" },
};

/** A server process with line-level access to its stdin and stdout. */
export function rawServer(
  dbPath: string,
  env: Record<string, string> = {},
  extraArgs: string[] = [],
) {
  const [command, ...args] = serverCommand(dbPath);
  const child = new Deno.Command(command!, {
    args: [...args, ...extraArgs],
    env: { AGENT_BUS_DB: storeLocation(dbPath), NO_COLOR: "1", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  let stderr = "";
  const stderrDone = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += chunk) }),
  ).catch(() => {});
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const encoder = new TextEncoder();
  return {
    child,
    stderr: () => stderr,
    async send(text: string) {
      await writer.write(encoder.encode(text));
    },
    async request(id: number, method: string, params: unknown = {}) {
      await writer.write(
        encoder.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"),
      );
    },
    async next(): Promise<Record<string, unknown>> {
      for (;;) {
        const cut = buffered.indexOf("\n");
        if (cut !== -1) {
          const line = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 1);
          return JSON.parse(line);
        }
        const { value, done } = await lines.read();
        if (done) throw new Error("stdout closed");
        buffered += value;
      }
    },
    async closeStdin() {
      await writer.close();
    },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await child.status;
      await lines.cancel().catch(() => {});
      await stderrDone;
    },
  };
}
