/**
 * Which MCP route a path names: `/mcp` (the peer tools) or
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

/** The route of a path, an error for a bad agent name, or undefined for no route. */
export function routeOf(pathname: string): Route | { error: string } | undefined {
  if (pathname === "/mcp" || pathname === "/mcp/") return { key: "peer", profile: "peer" };
  const match = /^\/agents\/([^/]+)\/mcp\/?$/.exec(pathname);
  if (!match) return undefined;
  try {
    const agent = cleanMailAgent(decodeURIComponent(match[1]!), "agent");
    return { key: `agent:${agent}`, profile: "mailbox", agent };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
