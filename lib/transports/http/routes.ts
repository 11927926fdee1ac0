/**
 * Which MCP route a path names, read from the profiles: `/mcp` (the peer
 * tools, or another profile's when the server is told so; `/mcp/sse` is an
 * alias AgentChatBus's clients use), a profile's own path (`/chatbus/mcp`)
 * or `/agents/{agent}/mcp/` (the per-agent profile: that agent's mailbox
 * tools, seed 003). Pure; one anchored match whose only quantifier stops at
 * `/`.
 *
 * @module
 */

import { cleanMailAgent } from "../../bus/mail.ts";
import { type Profile, PROFILES } from "../../mcp/profiles/mod.ts";

/** An MCP route. */
export interface Route {
  /** Sessions are bound to this key: the profile's name, or `agent:NAME`. */
  key: string;
  profile: Profile;
  agent?: string;
}

/**
 * The route of a path, an error for a bad agent name, or undefined for no route.
 *
 * @param atMcp the profile `/mcp` serves (one whose `http.atMcp` is set)
 * @param profiles the profiles to route to (the built-in ones)
 */
export function routeOf(
  pathname: string,
  atMcp: Profile,
  profiles: readonly Profile[] = PROFILES,
): Route | { error: string } | undefined {
  if (pathname === "/mcp" || pathname === "/mcp/" || pathname === "/mcp/sse") {
    return { key: atMcp.name, profile: atMcp };
  }
  const own = profiles.find((p) =>
    p.http.path !== undefined && (pathname === p.http.path || pathname === `${p.http.path}/`)
  );
  if (own) return { key: own.name, profile: own };
  const perAgent = profiles.find((p) => p.http.perAgent);
  const match = /^\/agents\/([^/]+)\/mcp\/?$/.exec(pathname);
  if (!match || !perAgent) return undefined;
  try {
    const agent = cleanMailAgent(decodeURIComponent(match[1]!), "agent");
    return { key: `agent:${agent}`, profile: perAgent, agent };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The path that serves `profile` when `/mcp` serves `atMcp`: `/mcp`, the
 * profile's own path, or undefined when it has none (a per-agent profile's
 * is `/agents/{agent}/mcp/`; some profiles are served over stdio alone).
 */
export function pathOf(profile: Profile, atMcp: Profile): string | undefined {
  return profile === atMcp ? "/mcp" : profile.http.path;
}
