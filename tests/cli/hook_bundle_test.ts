/**
 * The bundle the hooks run from source (`lib/cli/hook/hook.bundle.js`) is
 * what `deno task bundle` makes of the committed sources, and it is one
 * module: a run loads nothing else unless it answers over the database.
 *
 * @module
 */

import assert from "node:assert/strict";
import { bundleHook, HOOK_BUNDLE } from "../../scripts/bundle_hook.ts";
import { HOOK_PATH } from "../../lib/launch.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("the committed hook bundle is what hook.ts bundles to, and what hooks run", async () => {
  await using tmp = await tmpDir();
  const fresh = new URL(`file://${tmp.path}/hook.bundle.js`);
  await bundleHook(fresh);
  const committed = await Deno.readTextFile(HOOK_BUNDLE);
  assert.ok(
    committed === await Deno.readTextFile(fresh),
    "lib/cli/hook/hook.bundle.js is stale: run `deno task bundle`",
  );
  assert.equal(HOOK_PATH, HOOK_BUNDLE.pathname);
  // Its only import is the answer over the database, from source beside it.
  const imports = [...committed.matchAll(/\bimport\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]);
  assert.deepEqual(imports, ["./here.ts"]);
});
