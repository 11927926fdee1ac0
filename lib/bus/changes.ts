/**
 * Wake-ups for waiting `sync` calls, without writing anything.
 *
 * Commits by other processes are seen through `PRAGMA data_version` on the
 * held connection, a read of the WAL index that costs about a microsecond.
 * It is polled every `pollMs` only while someone waits, from one timer per
 * process however many calls wait. Commits made by this process do not move
 * its own `data_version`, so writers here call `notify()`.
 *
 * A waiter takes a `mark()` *before* it checks for new data and waits on
 * that mark, so a commit that lands between the check and the wait is never
 * missed.
 *
 * @module
 */

import type { Store } from "../store/mod.ts";

/** What a waiter has seen: the database's version and the local commit count. */
export interface ChangeMark {
  readonly dataVersion: number;
  readonly local: number;
}

/** Options of {@linkcode ChangeFeed}. */
export interface ChangeFeedOptions {
  /** Interval of the `data_version` check while someone waits. */
  pollMs?: number;
}

/** One per process: tells waiters that the database may have changed. */
export class ChangeFeed {
  readonly #store: Store;
  readonly #pollMs: number;
  readonly #waiters = new Set<() => void>();
  #local = 0;
  #lastVersion = -1;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(store: Store, options: ChangeFeedOptions = {}) {
    this.#store = store;
    this.#pollMs = options.pollMs ?? 2;
  }

  /** The current state, to be passed to {@linkcode ChangeFeed.wait}. */
  mark(): ChangeMark {
    return { dataVersion: this.#version(), local: this.#local };
  }

  /** Tell waiters that this process committed. */
  notify(): void {
    this.#local++;
    this.#wakeAll();
  }

  /** Number of calls waiting now (for status output). */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * Resolve with `"changed"` once anything has committed since `mark`, or
   * with `"timeout"` after `timeoutMs`.
   *
   * @throws the signal's reason when `signal` aborts
   */
  wait(
    mark: ChangeMark,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<"changed" | "timeout"> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#changedSince(mark)) return Promise.resolve("changed");
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timeout);
        signal?.removeEventListener("abort", abort);
        this.#waiters.delete(wake);
        this.#stopIfIdle();
      };
      const wake = (): void => {
        finish();
        resolve("changed");
      };
      const abort = (): void => {
        finish();
        reject(signal?.reason);
      };
      const timeout = setTimeout(() => {
        finish();
        resolve("timeout");
      }, Math.max(0, options.timeoutMs));
      signal?.addEventListener("abort", abort, { once: true });
      this.#waiters.add(wake);
      this.#start();
    });
  }

  /** Stop polling and release every waiter as changed (used on shutdown). */
  close(): void {
    this.#wakeAll();
    this.#stopIfIdle();
  }

  #changedSince(mark: ChangeMark): boolean {
    return this.#local !== mark.local || this.#version() !== mark.dataVersion;
  }

  #version(): number {
    try {
      this.#lastVersion = this.#store.dataVersion();
    } catch {
      // An unusable store: keep the last value; the waiter's own query reports the error.
    }
    return this.#lastVersion;
  }

  #start(): void {
    if (this.#timer !== undefined) return;
    let seen = this.#version();
    const timer = setInterval(() => {
      const now = this.#version();
      if (now !== seen) {
        seen = now;
        this.#wakeAll();
      }
    }, this.#pollMs);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #stopIfIdle(): void {
    if (this.#waiters.size > 0 || this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
