/**
 * Who may talk to the HTTP server.
 *
 * Binding to 127.0.0.1 keeps other machines out, but not a web page in the
 * user's own browser: a page can post to localhost, and with DNS rebinding
 * it can even read the answers. So every request's `Host` must name this
 * server (loopback names, the bound address, or hosts the user allows) and
 * its `Origin`, when a browser sends one, must be a loopback origin or one
 * the user allows. When a token is configured (required for any address
 * other than loopback) every request must carry it as a bearer token,
 * compared in constant time. The checks are pure so they can be tested
 * without a socket; the server applies them before routing.
 *
 * @module
 */

/** The outcome of a check: pass, or the status and message to refuse with. */
export type GuardResult = { ok: true } | { ok: false; status: 401 | 403; message: string };

/** What the server accepts. */
export interface GuardPolicy {
  /** Hostnames (no port, lower case, IPv6 in brackets) that may appear in `Host`. */
  allowedHosts: ReadonlySet<string>;
  /** Any `Host` is fine: a wildcard bind with a token (a rebinding page cannot know the token). */
  anyHost: boolean;
  /** Origins (`scheme://host[:port]`, lower case) accepted besides loopback ones. */
  allowedOrigins: ReadonlySet<string>;
  /** The bearer token, when one is required. */
  token: string | undefined;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

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
      message: `Host "${headers.get("host") ?? ""}" is not allowed`,
    };
  }
  const origin = headers.get("origin");
  if (origin !== null && !originAllowed(origin, policy)) {
    return { ok: false, status: 403, message: `Origin "${origin}" is not allowed` };
  }
  if (policy.token !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(headers.get("authorization") ?? "");
    const offered = [match?.[1]?.trim(), ...otherTokens].filter((t) => typeof t === "string");
    if (!offered.some((t) => timingSafeEqual(t, policy.token!))) {
      return { ok: false, status: 401, message: "A valid bearer token is required" };
    }
  }
  return { ok: true };
}

/**
 * True when a browser's `Origin` is this very server (`Host`) or one the
 * user allowed: what a state-changing request from the console must show.
 * No `Origin` (curl, scripts) passes; the other checks still apply.
 */
export function sameOrigin(headers: Headers, policy: GuardPolicy): boolean {
  const origin = headers.get("origin");
  if (origin === null) return true;
  if (policy.allowedOrigins.has(normalizeOrigin(origin))) return true;
  try {
    return new URL(origin).host === (headers.get("host") ?? "").toLowerCase();
  } catch {
    return false;
  }
}

/** Compare two strings in time that depends only on their lengths. */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

function originAllowed(origin: string, policy: GuardPolicy): boolean {
  if (policy.allowedOrigins.has(normalizeOrigin(origin))) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && isLoopback(url.hostname);
  } catch {
    return false;
  }
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
  return origin.toLowerCase().replace(/\/+$/, "");
}
