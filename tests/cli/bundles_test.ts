/**
 * The bundles what runs from source is (`lib/cli/hook/hook.bundle.js` for
 * the hooks, `lib/entry.bundle.js` for an MCP client's entry) are what
 * `deno task bundle` makes of the committed sources, and each is one
 * module: a run loads nothing else unless it needs more than its common
 * path (the hook's answer over the database, the entry's whole program),
 * which each names by URL, not in a literal `import()` (Deno reads those,
 * and everything they import, before the first line runs).
 *
 * @module
 */

import assert from "node:assert/strict";
import { type Bundle, BUNDLES, writeBundle } from "../../scripts/bundle.ts";
import { ENTRY_PATH, HOOK_PATH } from "../../lib/launch.ts";
import { tmpDir } from "../_helpers/tmp.ts";

/** The committed `bundle` as it is, after checking that the sources still bundle to it. */
async function freshBundle(bundle: Bundle): Promise<string> {
  await using tmp = await tmpDir();
  const fresh = new URL(`file://${tmp.path}/fresh.bundle.js`);
  await writeBundle(bundle, fresh);
  const committed = await Deno.readTextFile(bundle.out);
  assert.ok(
    committed === await Deno.readTextFile(fresh),
    `${bundle.out.pathname} is stale: run \`deno task bundle\``,
  );
  return committed;
}

/** The modules `code` imports (static or dynamic, by a literal name). */
function importsOf(code: string): string[] {
  return [...code.matchAll(/\bimport\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
}

Deno.test("the committed hook bundle is what hook.ts bundles to, and what hooks run", async () => {
  const committed = await freshBundle(BUNDLES.hook);
  assert.equal(HOOK_PATH, BUNDLES.hook.out.pathname);
  // It imports nothing by name (Deno would read it, and all behind it, at every start): the
  // answer over the database only when no bus answers, from source beside it.
  assert.deepEqual(importsOf(committed), []);
  assert.match(committed, /new URL\("\.\/here\.ts", import\.meta\.url\)/);
  await Deno.stat(new URL("./here.ts", BUNDLES.hook.out));
});

Deno.test("the committed entry bundle is what entry.ts bundles to, and what clients start", async () => {
  const committed = await freshBundle(BUNDLES.entry);
  assert.equal(ENTRY_PATH, BUNDLES.entry.out.pathname);
  // It imports nothing by name: the whole program only when it is needed, from this checkout.
  assert.deepEqual(importsOf(committed), []);
  assert.match(committed, /new URL\("lib\/cli\/mod\.ts", CHECKOUT_URL\)/);
});
