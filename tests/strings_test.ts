/**
 * Tests of the string helpers every layer uses (`lib/strings.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { counted } from "../lib/strings.ts";

Deno.test("counted names one thing in the singular and every other count in the plural", () => {
  assert.equal(counted(1, "message"), "1 message");
  assert.equal(counted(0, "problem"), "0 problems");
  assert.equal(counted(2, "reserved name"), "2 reserved names");
  assert.equal(counted(3, "busy process", "busy processes"), "3 busy processes");
  assert.equal(counted(1, "busy process", "busy processes"), "1 busy process");
});
