/**
 * Where a process runs — host, pid, parent, working directory — as a
 * session's record names it (`attendance.ts`) and as an entry tells the
 * resident bus; nothing else, so that an entry loads nothing more.
 *
 * @module
 */

/** Where this process runs: what a hook compares with its own. */
export interface ProcessPlace {
  host: string;
  pid: number;
  parentPid: number;
  cwd: string;
}

/** This process's place; a fact that cannot be read is left empty. */
export function processPlace(): ProcessPlace {
  const attempt = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch {
      return fallback;
    }
  };
  return {
    host: attempt(() => Deno.hostname(), ""),
    pid: Deno.pid,
    parentPid: attempt(() => Deno.ppid, 0),
    cwd: attempt(() => Deno.cwd(), ""),
  };
}
