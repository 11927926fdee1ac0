/**
 * The entry point the clients' hooks run from source: `agent-bus hook`
 * without the rest of the CLI. A client runs it on every turn, and Deno
 * prepares every module an entry can reach before it starts, so the hook
 * has an entry of its own (a compiled binary runs `agent-bus hook ...`).
 *
 * @module
 */

import { main } from "./lib/cli/hook/mod.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args, Deno.env.toObject()));
}
