/**
 * Codex's trust of the hooks `install codex --hooks` writes. Codex runs a
 * hook only once the user has trusted it, keyed by a hash of the hook's
 * definition that Codex computes. Trust goes through Codex's own interface,
 * as its `/hooks` screen does it: `codex app-server` (JSON-RPC over stdio)
 * lists the hooks with their current hash and trust status (`hooks/list`),
 * and the trust is written back through Codex (`config/batchWrite` of
 * `hooks.state.<key>.trusted_hash`). The hash is never computed here: the
 * value Codex listed is handed back, and the result is listed again to
 * verify it took.
 *
 * @module
 */

import { findExecutable } from "../path_lookup.ts";

/** How long Codex's app-server may take to answer everything asked of it. */
export const APP_SERVER_TIMEOUT_MS = 30_000;

/**
 * Where to ask: the working directory Codex lists hooks for, the
 * environment `codex` runs in (its `PATH` finds it; `HOME`/`CODEX_HOME`
 * say whose configuration it is), and our hook commands as written.
 */
export interface AskCodex {
  cwd: string;
  env: Env;
  commands: string[];
}

type Env = Record<string, string | undefined>;

const definedOnly = (env: Env) =>
  Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );

/** One of our hooks as Codex lists it. */
export interface CodexHook {
  key: string;
  event: string;
  trustStatus: string;
  currentHash: string;
}

/** What Codex says of our hooks, or why it could not be asked. */
export type CodexHooks =
  | { ok: true; version: string; hooks: CodexHook[] }
  | { ok: false; reason: string };

/** What the user does when Codex cannot be asked or did not take the trust. */
export const CODEX_TRUST_BY_HAND =
  "Codex runs only hooks you trust: start `codex`, type /hooks, and trust the agent-bus hooks " +
  "(Stop, UserPromptSubmit, SessionStart)";

interface RpcReply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message?: string };
}

/** A JSON-RPC session with `codex app-server`, closed when disposed. */
class AppServer implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffered = "";
  #next = 0;

  constructor(codex: string, cwd: string, env: Env) {
    this.#child = new Deno.Command(codex, {
      args: ["app-server"],
      cwd,
      clearEnv: true,
      env: definedOnly(env),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reader = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  async #send(message: Record<string, unknown>): Promise<void> {
    const line = `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
    await this.#writer.write(new TextEncoder().encode(line));
  }

  /** Call `method`; its result, or an Error with Codex's message. */
  async call(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = ++this.#next;
    await this.#send({ id, method, params });
    for (;;) {
      const end = this.#buffered.indexOf("\n");
      if (end < 0) {
        const { value, done } = await this.#reader.read();
        if (done) throw new Error(`codex app-server closed before answering ${method}`);
        this.#buffered += value;
        continue;
      }
      const line = this.#buffered.slice(0, end);
      this.#buffered = this.#buffered.slice(end + 1);
      let reply: RpcReply;
      try {
        reply = JSON.parse(line);
      } catch {
        continue;
      }
      if (reply.id !== id) continue; // a notification, or Codex asking something of its own
      if (reply.error) throw new Error(`${method}: ${reply.error.message ?? "failed"}`);
      return reply.result ?? {};
    }
  }

  notify(method: string): Promise<void> {
    return this.#send({ method });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#writer.close().catch(() => {});
    try {
      this.#child.kill();
    } catch { /* already gone */ }
    await this.#reader.cancel().catch(() => {});
    await this.#child.status;
  }
}

/** What may be asked of Codex's app-server: a JSON-RPC call. */
export interface CodexRpc {
  /** Call `method`; its result, or an Error with Codex's message. */
  call(method: string, params: unknown): Promise<Record<string, unknown>>;
}

/**
 * Run `fn` against a started and initialized app-server, within {@linkcode APP_SERVER_TIMEOUT_MS}.
 *
 * @throws {Deno.errors.NotFound} when `codex` is not on `options.env.PATH`
 */
export async function withAppServer<T>(
  options: Pick<AskCodex, "cwd" | "env">,
  fn: (server: CodexRpc, version: string) => Promise<T>,
): Promise<T> {
  const codex = findExecutable("codex", options.env.PATH ?? "");
  if (codex === undefined) throw new Deno.errors.NotFound("codex");
  await using server = new AppServer(codex, options.cwd, options.env);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`codex app-server did not answer in ${APP_SERVER_TIMEOUT_MS} ms`)),
      APP_SERVER_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      (async () => {
        const hello = await server.call("initialize", {
          clientInfo: { name: "agent-bus", version: "1" },
          capabilities: null,
        });
        await server.notify("initialized");
        const version = /\/(\d+\.\d+\.\d+)/.exec(String(hello.userAgent ?? ""))?.[1];
        return await fn(server, version ? `codex ${version}` : "codex");
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Our hooks among those Codex lists for `cwd`: the command hooks whose command is one of `commands`. */
async function listOurs(server: CodexRpc, cwd: string, commands: string[]): Promise<CodexHook[]> {
  const listed = await server.call("hooks/list", { cwds: [cwd] });
  const entries = Array.isArray(listed.data) ? listed.data as Record<string, unknown>[] : [];
  return entries.flatMap((entry) => Array.isArray(entry.hooks) ? entry.hooks : [])
    .filter((hook: Record<string, unknown>) =>
      hook.handlerType === "command" && commands.includes(String(hook.command))
    )
    .map((hook: Record<string, unknown>) => ({
      key: String(hook.key),
      event: eventTitle(String(hook.eventName)),
      trustStatus: String(hook.trustStatus),
      currentHash: String(hook.currentHash),
    }));
}

/** Codex lists `stop`, `userPromptSubmit`; its hooks file says `Stop`, `UserPromptSubmit`. */
const eventTitle = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** Why Codex could not be asked, as a user reads it. */
function reasonOf(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "Codex (`codex`) is not on the PATH";
  return error instanceof Error ? error.message : String(error);
}

/**
 * What Codex says of our hooks (`commands`, as written) for `cwd`: each
 * one's trust status. Never throws.
 */
export async function codexHookStatus(options: AskCodex): Promise<CodexHooks> {
  try {
    return await withAppServer(options, async (server, version) => ({
      ok: true as const,
      version,
      hooks: await listOurs(server, options.cwd, options.commands),
    }));
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  }
}

/**
 * Trust our hooks through Codex: hand back the hash Codex lists for each
 * one not trusted yet, then list them again. Never throws.
 *
 * @returns what Codex lists after the write (every hook `trusted` when it took)
 */
export async function trustCodexHooks(options: AskCodex): Promise<CodexHooks> {
  try {
    return await withAppServer(options, async (server, version) => {
      const before = await listOurs(server, options.cwd, options.commands);
      const pending = before.filter((hook) => hook.trustStatus !== "trusted");
      if (pending.length > 0) {
        const state = Object.fromEntries(
          pending.map((hook) => [hook.key, { trusted_hash: hook.currentHash }]),
        );
        await server.call("config/batchWrite", {
          edits: [{ keyPath: "hooks.state", value: state, mergeStrategy: "upsert" }],
        });
      }
      return {
        ok: true as const,
        version,
        hooks: await listOurs(server, options.cwd, options.commands),
      };
    });
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  }
}

/** Our hooks Codex will not run (not trusted, or changed since they were). */
export function untrusted(hooks: CodexHook[]): CodexHook[] {
  return hooks.filter((hook) => hook.trustStatus !== "trusted" && hook.trustStatus !== "managed");
}
