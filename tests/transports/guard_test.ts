/**
 * The HTTP guard in process: linear on hostile headers, strict about
 * origins, and total on cookies (a malformed one is no token, not a 500).
 */

import assert from "node:assert/strict";
import { bearerToken, checkRequest, guardPolicy } from "../../lib/transports/http/guard.ts";
import { createHttpHandler } from "../../lib/transports/http/handler.ts";
import { openTestBus, openTestSearch } from "../_helpers/bus.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** Generous: the backtracking code this replaces took about 2 s on the same input. */
const BOUND_MS = 500;

const headers = (init: Record<string, string>) => new Headers(init);

Deno.test("checkRequest() refuses a 48k-slash Origin promptly, before looking at the token", () => {
  const policy = guardPolicy("127.0.0.1", { token: "t" });
  const started = performance.now();
  const verdict = checkRequest(
    headers({
      host: "127.0.0.1:8765",
      origin: `http://a${"/".repeat(48_000)}b`,
      authorization: `Bearer${" ".repeat(48_000)}x!`,
    }),
    policy,
  );
  assert.ok(performance.now() - started < BOUND_MS);
  assert.equal(verdict.ok, false);
  assert.equal(!verdict.ok && verdict.status, 403);
});

Deno.test("checkRequest() accepts only the server's own origin and allowed ones", () => {
  const policy = guardPolicy("127.0.0.1", { allowedOrigins: ["https://app.example/"] });
  const check = (origin?: string) =>
    checkRequest(headers({ host: "127.0.0.1:8765", ...(origin ? { origin } : {}) }), policy).ok;
  assert.equal(check(), true, "no Origin: not a browser");
  assert.equal(check("http://127.0.0.1:8765"), true);
  assert.equal(check("https://app.example"), true);
  assert.equal(check("https://APP.example//"), true, "case and trailing slashes do not matter");
  assert.equal(check("http://127.0.0.1:3000"), false, "another local port is another origin");
  assert.equal(check("http://localhost:8765"), false, "another host name is another origin");
  assert.equal(check("null"), false);
  assert.equal(check("file://"), false);
});

Deno.test("bearerToken() reads the scheme case-insensitively and nothing else", () => {
  assert.equal(bearerToken("Bearer abc"), "abc");
  assert.equal(bearerToken("bearer   abc  "), "abc");
  assert.equal(bearerToken("Bearerabc"), undefined);
  assert.equal(bearerToken("Basic abc"), undefined);
  assert.equal(bearerToken("Bearer "), undefined);
  assert.equal(bearerToken(null), undefined);
  assert.equal(bearerToken(`Bearer ${"x".repeat(10_000)}`), undefined, "bounded");
});

Deno.test("a malformed token cookie on the console is 401, not 500", async () => {
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  await using search = openTestSearch(bus);
  const handler = createHttpHandler({
    deps: { bus, search },
    policy: guardPolicy("127.0.0.1", { token: "s3cret" }),
    maxBodyBytes: 1 << 20,
    sessionIdleMs: 60_000,
    jsonResponse: undefined,
  });
  try {
    const request = (cookie: string) =>
      handler.handle(
        new Request("http://127.0.0.1:8765/api/topics", {
          headers: { host: "127.0.0.1:8765", cookie },
        }),
      );
    for (const cookie of ["agent_bus_token=%E0%A4%A", `agent_bus_token=${"%".repeat(30_000)}`]) {
      const response = await request(cookie);
      assert.equal(response.status, 401, cookie.slice(0, 40));
      assert.equal((await response.json()).error.code, "UNAUTHORIZED");
    }
    const ok = await request("other=1; agent_bus_token=s3cret");
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    await handler.close();
  }
});
