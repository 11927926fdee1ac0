/**
 * Facts about the machine and processes, for benchmark reports: cores,
 * memory, CPU model, commit, and per-process CPU time and resident memory
 * from /proc (Linux).
 *
 * @module
 */

/** The machine a run happened on. */
export interface Machine {
  cores: number;
  memoryGiB: number;
  cpu: string;
  os: string;
  deno: string;
}

/** Describe this machine. */
export function machine(): Machine {
  let cpu = "unknown CPU";
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    cpu = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux
  }
  return {
    cores: navigator.hardwareConcurrency,
    memoryGiB: Math.round(Deno.systemMemoryInfo().total / 2 ** 30),
    cpu,
    os: `${Deno.build.os} ${Deno.build.arch}`,
    deno: Deno.version.deno,
  };
}

/** The current commit, marked `-dirty` when the tree has uncommitted changes. */
export async function commit(): Promise<string> {
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : "";
  };
  const head = await git("rev-parse", "--short", "HEAD");
  const dirty = await git("status", "--porcelain", "--untracked-files=no");
  return head ? `${head}${dirty ? "-dirty" : ""}` : "unknown";
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ, 100 on every mainstream Linux

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/**
 * Proportional set size of a process in MB: its private pages plus its
 * share of pages it shares with others, so that the sum over processes
 * counts each page once.
 */
export function pssMB(pid: number): number {
  const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
  const kib = Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? NaN);
  return kib * 1024 / 1e6;
}

/** Resident memory of a process in MB (10^6 bytes, the unit of the targets). */
export function rssMB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN);
  return kib * 1024 / 1e6;
}
