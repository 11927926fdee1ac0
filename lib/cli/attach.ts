/**
 * What an MCP client's server process does first: attach to the host's
 * resident bus and relay its session there, loading nothing but the relay
 * (`lib/transports/resident/entry.ts`). Shared by the whole program's
 * `serve` (`lib/cli/mod.ts`) and the entry clients start from source
 * (`entry.ts`), which loads the rest of the program only when this says the
 * session is served here.
 *
 * @module
 */

import type { ResolvedConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import { residentAddress } from "../transports/resident/protocol.ts";
import { attachToResidentBus } from "../transports/resident/entry.ts";
import { strayServeArgument } from "./commands/serve_options.ts";

/** How a serve ended on the resident bus (its exit code), or that it is served here. */
export type AttachOutcome = { code: number } | { here: true };

/**
 * Relay the session to the resident bus, unless it is told to serve alone
 * (`--standalone`, `AGENT_BUS_STANDALONE=1`), is given an argument no serve
 * takes (the caller's parser says so), or there can be no bus for its database
 * (said at `info`), or the bus could not be reached (said at `warn`): then
 * the caller serves it in this process.
 *
 * @param args the serve arguments (`--resident` asks for the bus whatever the settings)
 * @param printError writes what the bus refused in the arguments (a usage error) to stderr
 */
export async function attachFirst(
  args: string[],
  env: Record<string, string | undefined>,
  config: ResolvedConfig,
  log: Logger,
  printError: (text: string) => void,
): Promise<AttachOutcome> {
  // (An argument no serve takes: the program says so, without starting a bus for it.)
  if (strayServeArgument(args) !== undefined) return { here: true };
  if (args.includes("--standalone")) return { here: true };
  if (!config.resident.attach && !args.includes("--resident")) return { here: true };
  const address = residentAddress(config);
  if ("none" in address) {
    log.info(`Serving in this process: ${address.none}`);
    return { here: true };
  }
  const relayed = args.filter((arg) => arg !== "--resident");
  const attached = await attachToResidentBus(relayed, env, config, address);
  if ("code" in attached) {
    if (attached.error) printError(attached.error);
    return { code: attached.code };
  }
  log.warn(`Serving in this process: the resident bus: ${attached.failed}`);
  return { here: true };
}
