/**
 * Each client's hook protocol, as its reference documents it: which events
 * exist, what the JSON on stdin carries, and the JSON on stdout that blocks
 * a stop or adds context.
 *
 * - Claude Code (`Stop`, `UserPromptSubmit`, `SessionStart`): a stop is
 *   blocked with `{"decision":"block","reason"}`; `stop_hook_active` is true
 *   when the model is already continuing because of a stop hook. Context is
 *   `hookSpecificOutput.additionalContext`.
 * - Codex (`Stop`, `UserPromptSubmit`, `SessionStart`): the same wire as
 *   Claude Code's.
 * - Gemini CLI (`AfterAgent`, `BeforeAgent`, `SessionStart`): a response is
 *   rejected with `{"decision":"deny","reason"}` and the reason becomes the
 *   next prompt; `stop_hook_active` as above. Context is
 *   `hookSpecificOutput.additionalContext`. Gemini runs hooks with a
 *   sanitized environment and wants nothing but JSON on stdout.
 *
 * @module
 */

/** Clients whose hooks `agent-bus hook` speaks. */
export const HOOK_CLIENTS = ["claude-code", "codex", "gemini"] as const;
export type HookClient = typeof HOOK_CLIENTS[number];

/** What a hook event is for. */
export type HookKind = "stop" | "prompt" | "start";

/** The parts of a hook's input that matter here. */
export interface HookInput {
  /** The client's session id (empty when missing). */
  sessionId: string;
  /** Directories the client names as the session's: its `cwd`, its project directory. */
  cwds: string[];
  /** True when the model is already continuing because a stop hook blocked. */
  stopHookActive: boolean;
  /** The start of the prompt a prompt hook is given (empty when none). */
  prompt: string;
}

/** One client's protocol. */
export interface HookProtocol {
  /** The client's event names, by what each is for. */
  events: Record<HookKind, string>;
  /** The environment variable holding the project directory, if the client sets one. */
  projectDirVariable: string | undefined;
  /** Stdout that blocks a stop and hands the model `reason`. */
  block(reason: string): unknown;
  /** Stdout that adds one line of context for the model. */
  context(event: string, text: string): unknown;
}

const claudeWire = (projectDirVariable: string | undefined): HookProtocol => ({
  events: { stop: "Stop", prompt: "UserPromptSubmit", start: "SessionStart" },
  projectDirVariable,
  block: (reason) => ({ decision: "block", reason }),
  context: (event, text) => ({
    hookSpecificOutput: { hookEventName: event, additionalContext: text },
  }),
});

/** Every client's protocol. */
export const PROTOCOLS: Record<HookClient, HookProtocol> = {
  "claude-code": claudeWire("CLAUDE_PROJECT_DIR"),
  codex: claudeWire(undefined),
  gemini: {
    events: { stop: "AfterAgent", prompt: "BeforeAgent", start: "SessionStart" },
    projectDirVariable: "GEMINI_PROJECT_DIR",
    block: (reason) => ({ decision: "deny", reason }),
    context: (event, text) => ({
      hookSpecificOutput: { hookEventName: event, additionalContext: text },
    }),
  },
};

/** The kind of a client's event name, or undefined when the client has no such event. */
export function kindOf(protocol: HookProtocol, event: string): HookKind | undefined {
  const kinds = Object.keys(protocol.events) as HookKind[];
  return kinds.find((kind) => protocol.events[kind].toLowerCase() === event.toLowerCase());
}

/** Read the fields used here from a hook's stdin (anything unreadable is left empty). */
export function parseHookInput(
  text: string,
  protocol: HookProtocol,
  env: Record<string, string | undefined>,
): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = {};
  }
  const input = value !== null && typeof value === "object" ? value as Record<string, unknown> : {};
  const projectDir = protocol.projectDirVariable && env[protocol.projectDirVariable];
  const cwds = [input.cwd, projectDir]
    .filter((dir): dir is string => typeof dir === "string" && dir !== "");
  return {
    sessionId: typeof input.session_id === "string" ? input.session_id.slice(0, 200) : "",
    cwds,
    stopHookActive: input.stop_hook_active === true,
    prompt: typeof input.prompt === "string" ? input.prompt.slice(0, 200) : "",
  };
}
