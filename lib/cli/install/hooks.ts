/**
 * What `install --hooks` and `install --trust` write beside a client's MCP
 * entry, per each client's own documentation: the hook entries that run
 * `agent-bus hook` (kept apart from the user's other hooks, which stay as
 * they are), and the pre-approval of this server's tools only.
 *
 * | client      | hooks file                                   | events                                  | pre-approval                                      |
 * |-------------|----------------------------------------------|-----------------------------------------|---------------------------------------------------|
 * | Claude Code | ~/.claude/settings.json, .claude/settings.json | Stop, UserPromptSubmit, SessionStart  | `permissions.allow` gets `mcp__<name>` (same file) |
 * | Gemini CLI  | ~/.gemini/settings.json, .gemini/settings.json | AfterAgent, BeforeAgent, SessionStart | `"trust": true` on the server entry                |
 * | Codex       | ~/.codex/hooks.json, .codex/hooks.json       | Stop, UserPromptSubmit, SessionStart    | `default_tools_approval_mode = "approve"` on it    |
 *
 * @module
 */

import { type HookClient, PROTOCOLS } from "../../transports/hook/protocols.ts";
import type { ClientId, Places, Scope } from "./clients.ts";

/** The clients whose hooks `agent-bus hook` speaks. */
export function hookClient(id: ClientId): HookClient | undefined {
  return id === "claude-code" || id === "codex" || id === "gemini" ? id : undefined;
}

/** One change to one JSON file: the value at `keyPath` becomes `update(current)`. */
export interface JsonEdit {
  path: string;
  keyPath: string[];
  update(current: unknown): unknown;
}

const join = (...parts: string[]) => parts.join("/").replace(/\/+/g, "/");

/** The file a client reads its hooks from. */
export function hooksPath(client: HookClient, scope: Scope, places: Places): string {
  const base = scope === "user" ? places.home : places.cwd;
  if (client === "claude-code") return join(base, ".claude/settings.json");
  if (client === "gemini") return join(base, ".gemini/settings.json");
  const codexHome = scope === "user" ? places.env.CODEX_HOME || join(places.home, ".codex") : join(
    places.cwd,
    ".codex",
  );
  return join(codexHome, "hooks.json");
}

/** True when a hook command is one `agent-bus hook` entry for this client and event. */
export function isOurHook(command: unknown, client: HookClient, event: string): boolean {
  return typeof command === "string" && command.includes(` ${client} ${event} --db `);
}

type Group = { hooks?: { command?: unknown }[] } & Record<string, unknown>;

/** An event's hook groups without ours, plus `ours` when given. */
function withOurs(current: unknown, client: HookClient, event: string, ours?: Group) {
  const groups = Array.isArray(current) ? current as Group[] : [];
  const kept = groups.flatMap((group) => {
    if (!Array.isArray(group?.hooks)) return [group];
    const hooks = group.hooks.filter((hook) => !isOurHook(hook?.command, client, event));
    return hooks.length === 0 ? [] : [{ ...group, hooks }];
  });
  const next = ours ? [...kept, ours] : kept;
  return next.length === 0 ? undefined : next;
}

/** The edit that drops the object at `keyPath` once our removals have left it empty. */
export function dropIfEmpty(path: string, keyPath: string[]): JsonEdit {
  return {
    path,
    keyPath,
    update: (current) =>
      current !== null && typeof current === "object" && !Array.isArray(current) &&
        Object.keys(current).length === 0
        ? undefined
        : current,
  };
}

/**
 * The edits that add (with `command`) or remove (without) our hook entry
 * for each of a client's events.
 *
 * @param command the shell command for an event, or undefined to remove
 * @param timeoutSeconds how long the client lets the hook run (the on-call wait and a margin)
 */
export function hookEdits(
  client: HookClient,
  path: string,
  command: ((event: string) => string) | undefined,
  timeoutSeconds: number,
): JsonEdit[] {
  return Object.values(PROTOCOLS[client].events).map((event) => {
    const ours = command && {
      hooks: [{
        type: "command",
        command: command(event),
        // Gemini CLI counts in milliseconds, Claude Code and Codex in seconds.
        timeout: client === "gemini" ? timeoutSeconds * 1000 : timeoutSeconds,
        ...(client === "gemini" ? { name: `agent-bus-${event}` } : {}),
      }],
    };
    return {
      path,
      keyPath: ["hooks", event],
      update: (current: unknown) => withOurs(current, client, event, ours),
    };
  });
}

/** The Claude Code permission rule that pre-approves every tool of server `name`. */
export const claudeAllowRule = (name: string) => `mcp__${name}`;

/** The edit that adds (or removes) Claude Code's pre-approval of server `name`'s tools. */
export function claudeTrustEdit(path: string, name: string, trust: boolean): JsonEdit {
  const rule = claudeAllowRule(name);
  return {
    path,
    keyPath: ["permissions", "allow"],
    update(current) {
      const rules = Array.isArray(current) ? current.filter((r) => r !== rule) : [];
      if (trust) rules.push(rule);
      return rules.length === 0 ? undefined : rules;
    },
  };
}
