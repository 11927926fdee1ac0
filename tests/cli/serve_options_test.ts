/**
 * The stdio server's options as the relay checks them before it attaches
 * (`lib/cli/commands/serve_options.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { strayServeArgument } from "../../lib/cli/commands/serve_options.ts";

Deno.test("strayServeArgument names the first argument no serve takes, and passes over values", () => {
  assert.equal(strayServeArgument([]), undefined);
  assert.equal(
    strayServeArgument(["--profile", "peerbus", "--agent=me", "--no-drain", "--push", "none"]),
    undefined,
  );
  assert.equal(strayServeArgument(["--resident", "--standalone", "-h", "--help"]), undefined);
  // A string option's value is its own, whatever it looks like: parseArgs judges it.
  assert.equal(strayServeArgument(["--agent", "--frobnicate"]), undefined);
  assert.equal(strayServeArgument(["--profile", "peer", "--frobnicate"]), "--frobnicate");
  assert.equal(strayServeArgument(["--frob=1"]), "--frob=1");
  assert.equal(strayServeArgument(["-x"]), "-x");
  assert.equal(strayServeArgument(["--constructor"]), "--constructor");
  assert.equal(strayServeArgument(["--agent", "x", "frobnicate"]), "frobnicate");
  assert.equal(strayServeArgument(["--", "--frobnicate"]), "--frobnicate");
  assert.equal(strayServeArgument(["--resident", "--"]), undefined);
});
