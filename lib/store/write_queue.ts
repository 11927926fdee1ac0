/**
 * The order in which writers take SQLite's write lock.
 *
 * SQLite's lock has no queue: a writer that finds it taken can only try
 * again later, so under contention whoever retries at the right moment wins,
 * fresh arrivals pass writers that have waited long, and the retries burn
 * the CPU the holder needs. With 16 processes sending at once on 2 cores
 * that made the slowest sends wait a quarter of a second. So writers line
 * up first: behind each other within a process, and across processes on an
 * exclusive `flock` of a file beside the database (`<db>-lock`), which the
 * kernel hands on to one waiter at a time while the others sleep.
 *
 * The line only orders writers; it never guards data. SQLite's own lock
 * still does, so a program that does not line up (the sqlite3 shell, an
 * older agent-bus) is merely not queued, a file system without `flock`
 * leaves only the in-process line, and the kernel frees the place of a
 * process that dies holding it.
 *
 * @module
 */

import { BusError } from "../errors.ts";

/** Gives up a place in the line. */
export type Leave = () => void;

/** One per store: the line its writes wait in. */
export class WriteQueue {
  readonly #lockPath: string | undefined;
  #file: Deno.FsFile | undefined;
  #noFile = false;
  #tail: Promise<void> = Promise.resolve();
  /** Writers of this process holding the turn or waiting for it. */
  #inLine = 0;

  /** @param lockPath the file to `flock`, or undefined for an in-process line only */
  constructor(lockPath: string | undefined) {
    this.#lockPath = lockPath;
  }

  /**
   * Wait for this writer's turn: after every earlier writer of this process,
   * then for the cross-process lock. When nobody of this process holds or
   * waits for the turn and no other process holds the lock, the turn is
   * taken at once (a non-blocking `flock`), without a trip through the
   * runtime's blocking threads or a timer: the usual case of a quiet bus.
   * Not `again`, though (this process has just given the turn up and writes
   * once more, as a busy bus does): a writer of another process that the
   * release woke would then be passed before it could run, every time.
   *
   * @returns the function that gives the turn to the next writer
   * @throws {BusError} `DB_BUSY` when the turn does not come within `timeoutMs`
   */
  turn(timeoutMs: number, { again = false }: { again?: boolean } = {}): Promise<Leave> {
    if (this.#inLine === 0 && !again) {
      const file = this.#tryLock();
      if (file !== HELD_ELSEWHERE) return Promise.resolve(this.#enter()(file));
    }
    return this.#wait(timeoutMs);
  }

  async #wait(timeoutMs: number): Promise<Leave> {
    const previous = this.#tail;
    const taken = previous.then(() => this.#lock()).then(this.#enter());
    const timer = new Expiry(timeoutMs);
    const outcome = await Promise.race([taken, timer.expired]);
    timer.cancel();
    if (typeof outcome === "function") return outcome;
    // The turn may still come; whoever is behind must not wait for this writer then.
    taken.then((leave) => leave());
    throw busyError();
  }

  /**
   * Take the last place in the line. What it returns makes, from the lock
   * file once held, the writer's `Leave`, which gives the place up.
   */
  #enter(): (file: Deno.FsFile | undefined) => Leave {
    this.#inLine++;
    let next!: () => void;
    this.#tail = new Promise<void>((resolve) => next = resolve);
    return (file) => () => {
      unlock(file);
      this.#inLine--;
      next();
    };
  }

  /** Close the lock file (its lock goes with it). */
  close(): void {
    try {
      this.#file?.close();
    } catch {
      // Already closed.
    }
    this.#file = undefined;
  }

  async #lock(): Promise<Deno.FsFile | undefined> {
    const file = this.#open();
    if (!file) return undefined;
    try {
      await file.lock(true);
      return file;
    } catch {
      // No flock here (some network file systems): keep the in-process line only.
      this.#noFile = true;
      return undefined;
    }
  }

  /** The lock taken without waiting; `HELD_ELSEWHERE` when another process holds it. */
  #tryLock(): Deno.FsFile | undefined | typeof HELD_ELSEWHERE {
    const file = this.#open();
    if (!file) return undefined;
    try {
      return file.tryLockSync(true) ? file : HELD_ELSEWHERE;
    } catch {
      this.#noFile = true;
      return undefined;
    }
  }

  #open(): Deno.FsFile | undefined {
    if (this.#file || this.#noFile || !this.#lockPath) return this.#file;
    try {
      this.#file = Deno.openSync(this.#lockPath, {
        read: true,
        write: true,
        create: true,
        mode: 0o600,
      });
    } catch {
      // A read-only directory: the write itself will say why it fails.
      this.#noFile = true;
    }
    return this.#file;
  }
}

/** What a write whose wait for the write lock ran out is told. */
export function busyError(): BusError {
  return new BusError(
    "DB_BUSY",
    "The database is busy (another process holds its write lock); retry the call",
  );
}

const TIMED_OUT = Symbol("timed out");
const HELD_ELSEWHERE = Symbol("held by another process");

/**
 * A turn's timeout. (A `setTimeout`: a timeout on `Atomics.waitAsync`, which
 * spared a short-lived command the timers, is settled by Deno only when
 * V8's message loop is next pumped, so it could fire long after its time;
 * denoland/deno#15358.) `cancel()` clears it, so no timer outlives its write.
 */
class Expiry {
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly expired: Promise<typeof TIMED_OUT>;

  constructor(ms: number) {
    let timer!: ReturnType<typeof setTimeout>;
    this.expired = new Promise((resolve) => timer = setTimeout(() => resolve(TIMED_OUT), ms));
    this.#timer = timer;
  }

  cancel(): void {
    clearTimeout(this.#timer);
  }
}

function unlock(file: Deno.FsFile | undefined): void {
  try {
    file?.unlockSync();
  } catch {
    // A closed file has no lock to give up.
  }
}
