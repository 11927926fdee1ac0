/**
 * The tools of one connection, bound to its session: what both the MCP
 * `tools/call` handler and the HTTP shorthand (`{"tool", "args"}`) call.
 *
 * @module
 */

import type { CallToolResult, Tool as McpToolDescriptor } from "./_sdk.ts";
import type { ResolvedConfig } from "../config.ts";
import { asCall, type Bus } from "../bus/mod.ts";
import type { SessionRecord } from "../bus/attendance.ts";
import { Session, type SessionState } from "../bus/session.ts";
import { BusError } from "../errors.ts";
import type { SearchEngine } from "../search/mod.ts";
import { type BoundTool, errorResult, type ToolContext } from "./define_tool.ts";
import { type Profile, toolsOf } from "./profiles/mod.ts";

/** How one call is run. */
export interface CallOptions {
  /** Aborted when the client cancels. */
  signal: AbortSignal;
  /** Sends a progress notification, when the client asked for them. */
  progress?: ToolContext["progress"];
}

/** A connection's tools. */
export interface ToolRunner {
  tools: BoundTool[];
  session: Session;
  call(name: string, args: unknown, options: CallOptions): Promise<CallToolResult>;
}

/**
 * A profile's answer to `tools/list`: it needs nothing but the profile and
 * the configuration (never the database), so a front can give it while its
 * session's thread waits on a stalled database.
 */
export function toolListOf(
  profile: Profile,
  config: ResolvedConfig,
  options: { noDrain?: boolean | undefined } = {},
): { tools: McpToolDescriptor[] } {
  return {
    tools: toolsOf(profile, { noDrain: options.noDrain }).map((t) => t.bind(config).descriptor),
  };
}

/**
 * Bind a profile's tools to a new session.
 *
 * @param options `agent` is the session's mail identity; `noDrain` hides `bus.drain`; `record`
 *   is the session's entry in the register the hooks read; `endpoint` is where it is served;
 *   `sessionState` carries a session on from elsewhere (see `Session`)
 */
export function createToolRunner(
  profile: Profile,
  deps: { bus: Bus; search: SearchEngine },
  options: {
    agent?: string | undefined;
    noDrain?: boolean | undefined;
    record?: SessionRecord | undefined;
    endpoint?: string | undefined;
    sessionState?: {
      restore?: SessionState | undefined;
      onChange?: ((state: SessionState) => void) | undefined;
    } | undefined;
  } = {},
): ToolRunner {
  const { bus, search } = deps;
  const tools = toolsOf(profile, { noDrain: options.noDrain }).map((t) => t.bind(bus.config));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const session = new Session({
    agent: options.agent,
    record: options.record,
    endpoint: options.endpoint,
    ...options.sessionState,
  });
  return {
    tools,
    session,
    async call(name, args, call) {
      const tool = byName.get(name);
      if (!tool) {
        return errorResult(
          new BusError(
            "INVALID_ARGUMENT",
            `Unknown tool "${name}"; available: ${[...byName.keys()].join(", ")}`,
          ),
          name,
          bus.log,
        );
      }
      // (On PostgreSQL the call's database work has one deadline, whatever it takes.)
      return await asCall(bus, () =>
        tool.call(args, {
          bus,
          search,
          session,
          log: bus.log,
          signal: call.signal,
          progress: call.progress ?? (() => {}),
        }));
    },
  };
}
