/**
 * How long an installed entry takes to answer MCP's `initialize` when a
 * client starts it: the entry's command, arguments and environment as the
 * client's configuration holds them, started the way a client starts a
 * stdio server, timed from spawn to the answer. A client that waits less
 * than this begins its agent's first turn without agent-bus's tools.
 *
 * @module
 */

/** The longest `doctor` waits for an answer. */
export const PROBE_TIMEOUT_MS = 60_000;

/** The end of an unfinished line kept while more comes (an answer to initialize is far shorter). */
const MAX_LINE_CHARS = 1 << 20;

/** An entry as a client's configuration holds it. */
export interface EntryLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * Start `launch` as a client would (its `env` over `HOME` and `PATH`, the
 * parts of the user's environment clients pass on) and time its answer
 * to `initialize`.
 *
 * @returns the milliseconds from spawn to the answer, or why there was none
 */
export async function timeInitialize(
  launch: EntryLaunch,
  userEnv: Record<string, string | undefined>,
  cwd: string,
): Promise<{ ms: number } | { error: string }> {
  const env: Record<string, string> = {};
  for (const key of ["HOME", "PATH"]) {
    const value = userEnv[key];
    if (value !== undefined) env[key] = value;
  }
  const started = performance.now();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(launch.command, {
      args: launch.args,
      env: { ...env, ...launch.env },
      clearEnv: true,
      cwd,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const request = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "agent-bus doctor", version: "1" },
      },
    };
    await writer.write(new TextEncoder().encode(`${JSON.stringify(request)}\n`));
    const answered = (async () => {
      // Each line is looked at once, then dropped: whatever the entry prints, this stays linear.
      let partial = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return { error: "the server exited before answering initialize" };
        const lines = (partial + value).split("\n");
        partial = lines.pop()!.slice(-MAX_LINE_CHARS);
        if (lines.some((line) => /"id"\s*:\s*1\b/.test(line))) {
          return { ms: Math.round(performance.now() - started) };
        }
      }
    })();
    const timeout = new Promise<{ error: string }>((resolve) => {
      timer = setTimeout(
        () => resolve({ error: `no answer to initialize in ${PROBE_TIMEOUT_MS / 1000} s` }),
        PROBE_TIMEOUT_MS,
      );
    });
    return await Promise.race([answered, timeout]);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
    await reader.cancel().catch(() => {});
    try {
      child.kill();
    } catch { /* already gone */ }
    await child.status;
  }
}
