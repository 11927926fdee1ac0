/**
 * agent-bus: one program that lets coding agents on one machine talk
 * through MCP. This file only hands the command line to `lib/cli`.
 *
 * @module
 */

import { main } from "./lib/cli/mod.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args, Deno.env.toObject()));
}
