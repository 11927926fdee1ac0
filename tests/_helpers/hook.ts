/**
 * Running `agent-bus hook` as clients do: the command `install --hooks`
 * writes, through `sh -c`, with the client's JSON on stdin; and a stand-in
 * client process (`tests/fixtures/hook_client.ts`) that owns a server and
 * runs hooks as its children.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { hookCommand, type HookLaunch } from "../../lib/cli/install/launch.ts";
import { inheritedEnv } from "./peer.ts";
import { run } from "./run.ts";
import { storeLocation } from "./store.ts";

/** A hook's outcome: exit code, parsed stdout, stderr (and, run by a fake client, its time). */
export interface HookResult {
  code: number;
  /** Milliseconds from spawning the hook to its exit, measured by the client process. */
  ms?: number;
  out: Record<string, unknown>;
  stderr: string;
}

/** The shell command a client runs for `hook` on the database of `dbPath`. */
export function hookShell(dbPath: string, hook: HookLaunch): string {
  return hookCommand(
    { execPath: Deno.execPath(), dbPath: storeLocation(dbPath), env: inheritedEnv() },
    hook,
  );
}

function parse(code: number, stdout: string, stderr: string): HookResult {
  let out: Record<string, unknown>;
  try {
    out = JSON.parse(stdout);
  } catch {
    throw new Error(`hook printed something other than JSON: ${stdout}\n${stderr}`);
  }
  return { code, out, stderr };
}

/** What a hook run printed, its exit code, and how long it took from spawn to exit. */
export interface HookRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Run a hook command through `sh -c`, as clients do, with `input` as JSON on stdin. */
export async function spawnHook(command: string, input: unknown, cwd?: string): Promise<HookRun> {
  const started = performance.now();
  const result = await run("sh", ["-c", command], {}, { cwd, stdin: JSON.stringify(input) });
  return { ...result, ms: performance.now() - started };
}

/** Run a hook command from this process, in `cwd`, and parse its answer. */
export async function runHook(
  command: string,
  input: Record<string, unknown>,
  cwd?: string,
): Promise<HookResult> {
  const { code, stdout, stderr } = await spawnHook(command, input, cwd);
  return parse(code, stdout, stderr);
}

/** A stand-in client: one server joined to a topic, running hooks as its children. */
export interface FakeClient extends AsyncDisposable {
  topicId: string;
  /** Run a hook command as the client does. */
  hook(command: string, input: Record<string, unknown>): Promise<HookResult>;
  /** Call a tool of its server, as the model does; returns the structured result. */
  tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

const FIXTURE = fileURLToPath(new URL("../fixtures/hook_client.ts", import.meta.url));

/** Start a stand-in client in `cwd` whose server joins `topic` as `agent`. */
export async function startFakeClient(
  dbPath: string,
  options: { cwd: string; topic: string; agent: string; resident?: boolean },
): Promise<FakeClient> {
  const mode = options.resident ? ["resident"] : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", FIXTURE, dbPath, options.topic, options.agent, ...mode],
    cwd: options.cwd,
    env: Deno.env.toObject(),
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const end = buffered.indexOf("\n");
      if (end >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the fake client exited");
      buffered += value;
    }
  };
  const ask = async (request: unknown) => {
    await writer.write(new TextEncoder().encode(`${JSON.stringify(request)}\n`));
    return JSON.parse(await nextLine());
  };
  const ready = JSON.parse(await nextLine()) as { topic_id: string };
  return {
    topicId: ready.topic_id,
    async hook(command, input) {
      const { code, stdout, stderr, ms } = await ask({ command, input });
      return { ...parse(code, stdout, stderr), ms };
    },
    tool: (name, args) => ask({ tool: name, args }),
    async [Symbol.asyncDispose]() {
      await writer.close().catch(() => {});
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}
