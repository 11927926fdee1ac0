/**
 * How a browser carries the token to the web console: as a same-site,
 * HttpOnly cookie, obtained by opening `/?token=...` once (the token is
 * traded for the cookie and dropped from the address). Pure pieces: reading
 * the cookie, and the answer to a `/?token=` request.
 *
 * @module
 */

import { timingSafeEqual } from "../../strings.ts";

/** The cookie that carries the console's token. */
export const TOKEN_COOKIE = "agent_bus_token";

/**
 * A cookie's value from the `Cookie` header, if present and well formed (a
 * malformed `%`-escape is no token, not a server error). Linear: one split.
 */
export function cookie(headers: Headers, name: string): string | undefined {
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at === -1 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The answer to `/?token=...` on a server with `token`: back to `/`, with the
 * cookie only when the offered token is right (a wrong one beside a good
 * cookie is only dropped from the address).
 */
export function tokenExchange(offered: string, token: string): Response {
  const headers: HeadersInit = timingSafeEqual(offered, token)
    ? {
      location: "/",
      "set-cookie": `${TOKEN_COOKIE}=${
        encodeURIComponent(token)
      }; Path=/; HttpOnly; SameSite=Strict`,
    }
    : { location: "/" };
  return new Response(null, { status: 303, headers });
}
