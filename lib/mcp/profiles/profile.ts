/**
 * What a profile is: one dialect of the bus, as a server offers it. Every
 * part of the program that treats profiles differently (the MCP server, the
 * stdio and HTTP transports, `serve`, `install`, the hooks) reads it from
 * here instead of comparing names.
 *
 * @module
 */

import type { ToolDefinition } from "../define_tool.ts";
import type { Feature } from "../features/mod.ts";
import type { HookWatch } from "./hooks.ts";

/** One profile of the bus. */
export interface Profile {
  /** The name `--profile` (and `--role`, for a role) takes. */
  readonly name: string;
  /** Also chosen by `--role NAME` and `MCP_ROLE` (the teacher/student seed's roles). */
  readonly isRole: boolean;
  /** Its tools, in the order `tools/list` shows them. */
  readonly tools: readonly ToolDefinition[];
  /** What `initialize` tells the client. */
  readonly instructions: string;
  /** What its server offers besides tools. */
  readonly features: readonly Feature[];
  /**
   * Its agent name (`--agent`, `AGENT_BUS_AGENT`, or the mailbox URL's):
   * needed, used when given, or not used at all.
   */
  readonly agent: "required" | "optional" | "ignored";
  /**
   * What `install` writes for it: the server's default name, and its
   * arguments (`--agent NAME` follows unless the agent is ignored); undefined
   * when it is not installed as a stdio server.
   */
  readonly install: { serverName: string; args: readonly string[] } | undefined;
  /** What its stdio server records: the session for the hooks, a peer-registry entry. */
  readonly stdio: { recordSession: boolean; registerPeer: boolean };
  /** What the hooks watch for its sessions besides their topics (see `hooks.ts`). */
  readonly hooks: HookWatch;
  /**
   * Its Streamable HTTP route: at `/mcp` when the node is told to serve it
   * there (`atMcp`), at a path of its own, or per agent at
   * `/agents/{agent}/mcp/`; and whether it answers in plain JSON rather than
   * an event stream.
   */
  readonly http: { atMcp?: boolean; path?: string; perAgent?: boolean; jsonResponse: boolean };
}
