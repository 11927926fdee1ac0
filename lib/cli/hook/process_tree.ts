/**
 * The hook's view of the process tree: which processes are its ancestors
 * (the client that ran it is one of them) and which are alive. Read with
 * one `ps` run (Linux, macOS, the BSDs); where there is no `ps`, both are
 * unknown and the hook falls back to matching working directories.
 *
 * @module
 */

/** Ancestors are followed this far up at most. */
const MAX_DEPTH = 32;

/** The ancestors of this process, nearest first, and the pids alive now. */
export interface ProcessTree {
  ancestors: number[];
  alive: Set<number>;
}

/** Parse `ps -A -o pid=,ppid=` output into parent links. */
export function parsePs(text: string): Map<number, number> {
  const parents = new Map<number, number>();
  for (const line of text.split("\n")) {
    const [pid, ppid] = line.trim().split(/\s+/, 2).map(Number);
    if (Number.isInteger(pid) && Number.isInteger(ppid)) parents.set(pid!, ppid!);
  }
  return parents;
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

/** This process's ancestors and the live pids, or undefined when `ps` cannot be run. */
export async function readProcessTree(): Promise<ProcessTree | undefined> {
  if (Deno.build.os === "windows") return undefined;
  try {
    const output = await new Deno.Command("ps", {
      args: ["-A", "-o", "pid=,ppid="],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    if (!output.success) return undefined;
    const parents = parsePs(new TextDecoder().decode(output.stdout));
    return { ancestors: ancestorsOf(parents, Deno.ppid), alive: new Set(parents.keys()) };
  } catch {
    return undefined;
  }
}
