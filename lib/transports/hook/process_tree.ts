/**
 * A hook's view of the process tree: which processes are its ancestors
 * (the client that ran it is one of them), which are alive, and since when
 * (so a pid reused by a later process is not taken for the server that
 * had it). Read with one `ps` run (Linux, macOS, the BSDs; the start time
 * where `ps` has `etimes`); where there is no `ps`, all of it is unknown and
 * the hook falls back to matching working directories.
 *
 * @module
 */

/** Ancestors are followed this far up at most. */
const MAX_DEPTH = 32;

/** The ancestors of this process, nearest first, and the pids alive now with their start. */
export interface ProcessTree {
  ancestors: number[];
  /** Each live pid, and when it started (Unix seconds) where `ps` says. */
  alive: Map<number, number | undefined>;
}

/** Parent links and start times read from `ps -A -o pid=,ppid=[,etimes=]` at `now` (Unix s). */
export function parsePs(
  text: string,
  now: number,
): { parents: Map<number, number>; started: Map<number, number | undefined> } {
  const parents = new Map<number, number>();
  const started = new Map<number, number | undefined>();
  for (const line of text.split("\n")) {
    const [pid, ppid, elapsed] = line.trim().split(/\s+/, 3).map(Number);
    if (!Number.isInteger(pid) || !Number.isInteger(ppid)) continue;
    parents.set(pid!, ppid!);
    started.set(pid!, Number.isFinite(elapsed) ? now - elapsed! : undefined);
  }
  return { parents, started };
}

/** Follow parent links up from `start` (included), stopping at a loop, pid 0/1, or the cap. */
export function ancestorsOf(parents: Map<number, number>, start: number): number[] {
  const chain: number[] = [];
  for (let pid = start; pid > 1 && chain.length < MAX_DEPTH && !chain.includes(pid);) {
    chain.push(pid);
    const parent = parents.get(pid);
    if (parent === undefined) break;
    pid = parent;
  }
  return chain;
}

/**
 * The ancestors of the process whose parent is `parent` (by default this
 * one's), and the live pids; undefined when `ps` cannot be run.
 */
export async function readProcessTree(parent = Deno.ppid): Promise<ProcessTree | undefined> {
  if (Deno.build.os === "windows") return undefined;
  // `etimes` (seconds since start) is procps' and the BSDs'; without it, start times are unknown.
  for (const columns of ["pid=,ppid=,etimes=", "pid=,ppid="]) {
    try {
      const output = await new Deno.Command("ps", {
        args: ["-A", "-o", columns],
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      if (!output.success) continue;
      const { parents, started } = parsePs(
        new TextDecoder().decode(output.stdout),
        Date.now() / 1000,
      );
      return { ancestors: ancestorsOf(parents, parent), alive: started };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
