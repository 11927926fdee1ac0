/**
 * `deno task vendor`: copy the web console's libraries from the npm
 * versions pinned in `deno.json` into `lib/console/vendor/` (after a version
 * bump). `tests/console/vendor_test.ts` checks the copies.
 *
 * @module
 */

import { VENDOR, VENDORED } from "./vendor_files.ts";

for (const [name, load] of VENDORED) {
  await Deno.writeTextFile(new URL(name, VENDOR), (await load()).default);
  Deno.stdout.writeSync(new TextEncoder().encode(`wrote lib/console/vendor/${name}\n`));
}
