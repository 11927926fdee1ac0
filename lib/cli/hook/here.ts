/**
 * A hook run answered in the hook's own process, over the database: where
 * no resident bus runs (or it went away before it answered). It opens the
 * bus only when the run needs it, and starts `ps` (the process tree) just
 * before, so the two overlap.
 *
 * @module
 */

import type { ResolvedConfig } from "../../config.ts";
import type { Logger } from "../../log.ts";
import { type BusRuntime, closeBusRuntime, openBusRuntime } from "../../bus_runtime.ts";
import { answerHook, type HookAnswer, type HookAsk } from "../../transports/hook/answer.ts";
import { readProcessTree } from "../../transports/hook/process_tree.ts";

/** Answer `ask` over the database of `config`. */
export async function answerHere(
  config: ResolvedConfig,
  ask: HookAsk,
  log: Logger,
): Promise<HookAnswer> {
  let runtime: BusRuntime | undefined;
  try {
    const answer = await answerHook(ask, {
      open() {
        const tree = readProcessTree();
        runtime = openBusRuntime(config, { log });
        return { bus: runtime.bus, parent: Deno.ppid, attached: [], tree: () => tree };
      },
    });
    return { ...answer, trace: { ...answer.trace, by: "hook" } };
  } finally {
    if (runtime) closeBusRuntime(runtime);
  }
}
