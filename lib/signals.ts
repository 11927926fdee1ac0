/**
 * The signals that ask a process to shut down — SIGINT, and SIGTERM where
 * the system has it — listened to in one place by the servers and `watch`.
 *
 * @module
 */

/**
 * Call `stop` whenever a shutdown signal arrives.
 *
 * @returns what stops listening
 */
export function onShutdownSignal(stop: () => void): () => void {
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, stop);
  return () => {
    for (const signal of signals) Deno.removeSignalListener(signal, stop);
  };
}
