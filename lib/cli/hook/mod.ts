/**
 * `agent-bus hook <client> <event>`: the command a client runs as a hook,
 * so that an agent hears about messages for it without having to call a
 * tool first (what it is told: `lib/transports/hook/answer.ts`).
 *
 * It asks the resident bus of its database when one runs (`hook_ask.ts`:
 * the bus has the database open and hears commits in process), and
 * otherwise answers over the database itself (`here.ts`, loaded only then);
 * a bus that goes away mid-run leaves the rest of the on-call wait to the
 * database. Each run's answer and why go to the hook record
 * (`lib/transports/hook/record.ts`), which the bus writes when it answers.
 *
 * It loads only what it needs (it runs on every turn), speaks only JSON on
 * stdout, and never fails the client's turn: on any internal error it
 * writes one line to stderr and lets the client go on (exit 0).
 *
 * @module
 */

import { loadConfig } from "../../config.ts";
import { createLogger } from "../../log.ts";
import type { HookAsk } from "../../transports/hook/answer.ts";
import {
  HOOK_CLIENTS,
  type HookClient,
  kindOf,
  PROTOCOLS,
} from "../../transports/hook/protocols.ts";
import { askResidentBus } from "../../transports/resident/hook_ask.ts";
import { type ByteSource, chunkReader, chunksOf } from "../../transports/direct_io.ts";
import { concat } from "../../transports/frame_reader.ts";
import { recordDir, writeRecord } from "../../transports/hook/record.ts";

/**
 * The answer over the database, named so that Deno does not prepare it
 * before it is needed: a literal `import("./here.ts")` has Deno read the
 * 50 modules behind it at every start of the hook (a third of its run when
 * the bus answers). A compiled binary includes it (`deno task compile`).
 */
const HERE: string = new URL("./here.ts", import.meta.url).href;

/** Stops blocked in a row unless `--max-blocks` says otherwise. */
export const DEFAULT_MAX_BLOCKS = 5;
/** The longest on-call wait. */
export const MAX_WAIT_SECONDS = 3600;
/** Stdin beyond this is not read (a hook's input is a few KB; Gemini's carries the response). */
const MAX_INPUT_BYTES = 4 * 1024 * 1024;

export const HOOK_USAGE = `Usage: agent-bus hook <${HOOK_CLIENTS.join("|")}> <event> [options]

Run by a client as a hook (agent-bus install <client> --hooks writes the entries). Events:
  claude-code, codex   Stop, UserPromptSubmit, SessionStart
  gemini               AfterAgent, BeforeAgent, SessionStart

Options:
  --db PATH            The database (default: AGENT_BUS_DB, else ~/.agent_bus/bus.sqlite)
  --wait SECONDS       On a stop with nothing new unread, wait this long for a message (on call)
  --max-blocks N       Stops blocked in a row at most (default ${DEFAULT_MAX_BLOCKS})`;

/** What the hook writes and how it exits. */
export interface HookOutcome {
  stdout: unknown;
  code: number;
}

/** The client's input, read directly (streams cost a fresh process milliseconds). */
async function readInput(stdin: ByteSource): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunksOf(chunkReader(stdin))) {
    if (size < MAX_INPUT_BYTES) chunks.push(chunk);
    size += chunk.length;
  }
  if (size > MAX_INPUT_BYTES) return "{}";
  return new TextDecoder().decode(concat(chunks));
}

/** The hook's options. */
interface HookArgs {
  values: { db?: string; wait?: string; "max-blocks"?: string; help?: boolean };
  positionals: string[];
}

/**
 * Read `<client> <event> [--db P] [--wait S] [--max-blocks N] [--help]` (by
 * hand: Node's `parseArgs` alone costs the hook a third of its start-up).
 *
 * @returns the arguments, or what is wrong with them
 */
export function parseHookArgs(args: string[]): HookArgs | string {
  const values: HookArgs["values"] = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") {
      values.help = true;
      continue;
    }
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    if (name !== "db" && name !== "wait" && name !== "max-blocks") return `Unknown option ${arg}`;
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) return `${arg} needs a value`;
    values[name] = value;
  }
  return { values, positionals };
}

function positiveInt(value: string | undefined, name: string, max: number, fallback: number) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    throw new RangeError(`${name} must be an integer from 0 to ${max}`);
  }
  return n;
}

/**
 * Run one hook.
 *
 * @param args the arguments after `hook`
 * @param env the environment
 * @param stdin the hook's input (the client's JSON)
 */
export async function runHook(
  args: string[],
  env: Record<string, string | undefined>,
  stdin: ByteSource,
): Promise<HookOutcome> {
  const started = performance.now();
  const log = createLogger("warn", { name: "agent-bus hook" });
  const parsed = parseHookArgs(args);
  if (typeof parsed === "string") {
    log.error(`${parsed}\n${HOOK_USAGE}`);
    return { stdout: {}, code: 1 };
  }
  const { values, positionals } = parsed;
  const [client, event] = positionals as [HookClient | undefined, string | undefined];
  if (values.help) return { stdout: HOOK_USAGE, code: 0 };
  const protocol = client && HOOK_CLIENTS.includes(client) ? PROTOCOLS[client] : undefined;
  if (!protocol || !event || !kindOf(protocol, event) || positionals.length !== 2) {
    log.error(`Name a client and one of its events.\n${HOOK_USAGE}`);
    return { stdout: {}, code: 1 };
  }
  try {
    const projectDir = protocol.projectDirVariable;
    const ask: HookAsk = {
      client: client!,
      event,
      input: await readInput(stdin),
      env: projectDir && env[projectDir] !== undefined ? { [projectDir]: env[projectDir] } : {},
      wait: positiveInt(values.wait, "--wait", MAX_WAIT_SECONDS, 0),
      maxBlocks: positiveInt(values["max-blocks"], "--max-blocks", 1000, DEFAULT_MAX_BLOCKS),
    };
    const { config } = loadConfig({ ...env, AGENT_BUS_DB: values.db ?? env.AGENT_BUS_DB });
    const viaBus = await askResidentBus(config, ask, Deno.ppid);
    let answer;
    if ("answer" in viaBus) {
      answer = viaBus.answer;
    } else {
      // Over the database, with what is left of the on-call wait.
      const { answerHere } = await import(HERE) as typeof import("./here.ts");
      const left = Math.max(0, ask.wait - (performance.now() - started) / 1000);
      answer = await answerHere(config, { ...ask, wait: left }, log);
      answer.trace.noBus = viaBus.failed;
    }
    // (The bus wrote the record of what it answered: a warm process writes it faster.)
    const dir = "answer" in viaBus ? undefined : recordDir(config.dbPath, config.resident.home);
    writeRecord(dir, answer.trace, config.logLevel === "debug");
    return { stdout: answer.stdout, code: 0 };
  } catch (error) {
    // Never fail the client's turn: say what went wrong and let it go on.
    log.error(`hook failed: ${(error as Error)?.message ?? error}`);
    return { stdout: {}, code: 0 };
  }
}

/** The entry point of `agent-bus hook`: prints the outcome and returns the exit code. */
export async function main(args: string[], env: Record<string, string | undefined>) {
  const outcome = await runHook(args, env, Deno.stdin);
  const text = typeof outcome.stdout === "string" ? outcome.stdout : JSON.stringify(outcome.stdout);
  await Deno.stdout.write(new TextEncoder().encode(`${text}\n`));
  return outcome.code;
}
