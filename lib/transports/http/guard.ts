/**
 * Who may talk to the HTTP server.
 *
 * Binding to 127.0.0.1 keeps other machines out, but not a web page in the
 * user's own browser: a page can post to localhost, and with DNS rebinding
 * it can even read the answers. So every request's `Host` must name this
 * server (loopback names, the bound address, or hosts the user allows) and
 * its `Origin`, when a browser sends one, must be this server's own origin
 * or one the user allows: a page served on another local port is another
 * origin, and may not post to the bus. Requests without `Origin` (curl,
 * agents) are not browsers' and pass. When a token is configured (required
 * for any address other than loopback) every request must carry it as a
 * bearer token, compared in constant time. The checks are pure so they can
 * be tested without a socket; the server applies them before routing.
 *
 * Hazard: these checks run before authentication on headers an attacker
 * chooses (a header may be tens of kilobytes), so every string operation here
 * is a single forward scan or a bounded slice; no regular expression with a
 * quantifier that can backtrack touches a header.
 *
 * @module
 */

import { timingSafeEqual, trimTrailingSlashes } from "../../strings.ts";

/** The outcome of a check: pass, or the status and message to refuse with. */
export type GuardResult = { ok: true } | { ok: false; status: 401 | 403; message: string };

/** What the server accepts. */
export interface GuardPolicy {
  /** Hostnames (no port, lower case, IPv6 in brackets) that may appear in `Host`. */
  allowedHosts: ReadonlySet<string>;
  /** Any `Host` is fine: a wildcard bind with a token (a rebinding page cannot know the token). */
  anyHost: boolean;
  /** Origins (`scheme://host[:port]`, lower case) accepted besides the server's own. */
  allowedOrigins: ReadonlySet<string>;
  /** The bearer token, when one is required. */
  token: string | undefined;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
/** Longest `Origin` worth parsing: a real one is a scheme, a host name and a port. */
const MAX_ORIGIN_CHARS = 2048;
/** Longest `Authorization` header looked at. */
const MAX_AUTHORIZATION_CHARS = 8192;

/** True for addresses only this machine can reach. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** The policy for a server bound to `hostname`. */
export function guardPolicy(
  hostname: string,
  options: {
    token?: string | undefined;
    allowedHosts?: readonly string[];
    allowedOrigins?: readonly string[];
  },
): GuardPolicy {
  const wildcard = hostname === "0.0.0.0" || hostname === "::" || hostname === "[::]";
  const hosts = new Set([...LOOPBACK_NAMES, ...(options.allowedHosts ?? [])]);
  if (!wildcard) hosts.add(bracketed(hostname.toLowerCase()));
  return {
    allowedHosts: hosts,
    anyHost: wildcard && options.token !== undefined,
    allowedOrigins: new Set((options.allowedOrigins ?? []).map(normalizeOrigin)),
    token: options.token,
  };
}

/**
 * Check a request's `Host`, `Origin` and bearer token against `policy`.
 * `otherTokens` are credentials a browser can carry instead of the header
 * (the web console's same-site cookie, or `?token=` when opening it).
 */
export function checkRequest(
  headers: Headers,
  policy: GuardPolicy,
  otherTokens: readonly (string | null | undefined)[] = [],
): GuardResult {
  const host = hostnameOf(headers.get("host"));
  if (!policy.anyHost && (host === undefined || !policy.allowedHosts.has(host))) {
    return {
      ok: false,
      status: 403,
      message: `Host "${clip(headers.get("host") ?? "")}" is not allowed`,
    };
  }
  if (!sameOrigin(headers, policy)) {
    return {
      ok: false,
      status: 403,
      message: `Origin "${clip(headers.get("origin") ?? "")}" is not allowed`,
    };
  }
  if (policy.token !== undefined) {
    const offered = [bearerToken(headers.get("authorization")), ...otherTokens]
      .filter((t) => typeof t === "string");
    if (!offered.some((t) => timingSafeEqual(t, policy.token!))) {
      return { ok: false, status: 401, message: "A valid bearer token is required" };
    }
  }
  return { ok: true };
}

/**
 * True when a browser's `Origin` is this very server (`Host`) or one the
 * user allowed. No `Origin` (curl, scripts, agents) passes; the other
 * checks still apply.
 */
export function sameOrigin(headers: Headers, policy: GuardPolicy): boolean {
  const origin = headers.get("origin");
  if (origin === null) return true;
  if (origin.length > MAX_ORIGIN_CHARS) return false;
  if (policy.allowedOrigins.has(normalizeOrigin(origin))) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") &&
      url.host === (headers.get("host") ?? "").trim().toLowerCase();
  } catch {
    return false;
  }
}

/**
 * The token of an `Authorization: Bearer <token>` header (scheme matched
 * case-insensitively), or undefined.
 */
export function bearerToken(header: string | null): string | undefined {
  if (header === null || header.length > MAX_AUTHORIZATION_CHARS) return undefined;
  const value = header.trim();
  if (value.length < 7 || value.slice(0, 6).toLowerCase() !== "bearer") return undefined;
  const rest = value.slice(6);
  if (rest.trimStart().length === rest.length) return undefined; // "Bearerxyz"
  const token = rest.trim();
  return token === "" ? undefined : token;
}

/** The hostname of a `Host` header, without the port; IPv6 stays in brackets. */
function hostnameOf(host: string | null): string | undefined {
  if (!host) return undefined;
  const value = host.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end === -1 ? undefined : value.slice(0, end + 1);
  }
  return value.split(":")[0] || undefined;
}

function bracketed(hostname: string): string {
  return hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
}

/** An origin as compared: lower case, without trailing slashes. */
function normalizeOrigin(origin: string): string {
  return trimTrailingSlashes(origin).toLowerCase();
}

/** A header value cut for an error message. */
function clip(value: string): string {
  return value.length > 200 ? `${value.slice(0, 200)}…` : value;
}
