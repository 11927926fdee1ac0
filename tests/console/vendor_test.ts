/**
 * The web console's libraries are vendored in `lib/console/vendor/` (so the
 * stdio server's module graph holds no npm package it never uses, and the
 * compiled binary embeds them as plain files). This test proves each file
 * is byte for byte the one in the npm package pinned in `deno.json`;
 * `deno task vendor` rewrites them from those packages after a version bump.
 */

import assert from "node:assert/strict";
import { VENDOR, VENDORED } from "../../scripts/vendor_files.ts";

Deno.test("vendored console libraries are the pinned npm packages' files, unchanged", async () => {
  for (const [name, load] of VENDORED) {
    const pinned = (await load()).default;
    assert.equal(
      await Deno.readTextFile(new URL(name, VENDOR)),
      pinned,
      `${name} differs from its npm package: run deno task vendor`,
    );
  }
});
