/**
 * The stdio server's options as the relay checks them before it attaches
 * (`lib/cli/commands/serve_options.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { unknownServeOption } from "../../lib/cli/commands/serve_options.ts";

Deno.test("unknownServeOption names the first argument no serve option matches, and passes over values", () => {
  assert.equal(unknownServeOption([]), undefined);
  assert.equal(
    unknownServeOption(["--profile", "peerbus", "--agent=me", "--no-drain", "--push", "none"]),
    undefined,
  );
  assert.equal(unknownServeOption(["--resident", "--standalone", "-h", "--help"]), undefined);
  // A string option's value is its own, whatever it looks like: parseArgs judges it.
  assert.equal(unknownServeOption(["--agent", "--frobnicate"]), undefined);
  assert.equal(unknownServeOption(["--profile", "peer", "--frobnicate"]), "--frobnicate");
  assert.equal(unknownServeOption(["--frob=1"]), "--frob=1");
  assert.equal(unknownServeOption(["-x"]), "-x");
  assert.equal(unknownServeOption(["--constructor"]), "--constructor");
  assert.equal(unknownServeOption(["--", "--frobnicate"]), undefined);
});
