/**
 * The entry point MCP clients start from source (what `install` writes,
 * bundled into `lib/entry.bundle.js` by `deno task bundle`, so that a start
 * loads one module): it attaches to the host's resident bus and relays the session
 * (`lib/cli/attach.ts`), without the rest of the program. Deno prepares
 * every module an entry point can reach before it runs, and `main.ts` reaches
 * all of them (the console, the HTTP server, the config editors, …): through
 * this one a client's server starts in about half the time and memory. A
 * session it cannot relay, or any command, goes to the whole program, loaded
 * then (a compiled binary runs `agent-bus` itself).
 *
 * @module
 */

import { loadConfig } from "./lib/config.ts";
import { createLogger } from "./lib/log.ts";
import { redactSecrets } from "./lib/strings.ts";
import { attachFirst } from "./lib/cli/attach.ts";
import { CHECKOUT_URL } from "./lib/launch.ts";

/**
 * The whole program, named so that Deno does not prepare it before it is
 * needed (from this checkout's root: this module also runs bundled, in `lib/`).
 */
const PROGRAM: string = new URL("lib/cli/mod.ts", CHECKOUT_URL).href;

/** What the entry uses of the program (`lib/cli/mod.ts`). */
interface Program {
  main(args: string[], env: Record<string, string | undefined>): Promise<number>;
}

if (import.meta.main) {
  const args = Deno.args;
  const env = Deno.env.toObject();
  // A command, `--help` or `--version`: the whole program's.
  const serves = args[0]?.startsWith("-") !== false &&
    !args.some((arg) => ["--help", "-h", "--version", "-V"].includes(arg));
  if (serves) {
    const { config } = loadConfig(env, { cwd: Deno.cwd() });
    const log = createLogger(config.logLevel);
    const stderr = (text: string) =>
      Deno.stderr.writeSync(new TextEncoder().encode(`${redactSecrets(text)}\n`));
    const attached = await attachFirst(args, env, config, log, stderr);
    if ("code" in attached) Deno.exit(attached.code);
  }
  // Served here: the bus said why already, so the program does not ask it again.
  const { main } = await import(PROGRAM) as Program;
  Deno.exit(await main(serves ? ["--standalone", ...args] : args, env));
}
