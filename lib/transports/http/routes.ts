/**
 * Which MCP route a path names: `/mcp` (the peer tools, or the chatbus
 * ones when the server is told so; `/mcp/sse` is an alias AgentChatBus's
 * clients use), `/chatbus/mcp` (the chatbus tools, seed 002) or
 * `/agents/{agent}/mcp/` (that agent's mailbox tools, seed 003). Pure; one
 * anchored match whose only quantifier stops at `/`.
 *
 * @module
 */

import { cleanMailAgent } from "../../bus/mail.ts";
import type { ProfileName } from "../../mcp/profiles.ts";

/** An MCP route. */
export interface Route {
  /** Sessions are bound to this key: `peer` or `agent:NAME`. */
  key: string;
  profile: ProfileName;
  agent?: string;
}

/** The tool sets `/mcp` can serve. */
export type McpProfile = "peer" | "chatbus";

/**
 * The route of a path, an error for a bad agent name, or undefined for no route.
 *
 * @param mcpProfile what `/mcp` serves (default the peer tools)
 */
export function routeOf(
  pathname: string,
  mcpProfile: McpProfile = "peer",
): Route | { error: string } | undefined {
  if (pathname === "/mcp" || pathname === "/mcp/" || pathname === "/mcp/sse") {
    return { key: mcpProfile, profile: mcpProfile };
  }
  if (pathname === "/chatbus/mcp" || pathname === "/chatbus/mcp/") {
    return { key: "chatbus", profile: "chatbus" };
  }
  const match = /^\/agents\/([^/]+)\/mcp\/?$/.exec(pathname);
  if (!match) return undefined;
  try {
    const agent = cleanMailAgent(decodeURIComponent(match[1]!), "agent");
    return { key: `agent:${agent}`, profile: "mailbox", agent };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
