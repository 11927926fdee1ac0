/**
 * Wake-ups for waiting `sync` calls, without writing anything and without
 * burning CPU while nothing happens.
 *
 * A commit by another process is seen through `PRAGMA data_version` on the
 * held connection, a read of the WAL index that costs about a microsecond.
 * While traffic flows (a change in the last couple of seconds) the feed
 * polls it every couple of milliseconds. Once quiet, it stops polling fast
 * and watches the database's directory instead: every commit appends to the
 * `-wal` file, and the file event starts a short burst of fast checks (the
 * event can arrive a moment before the commit becomes visible, so one check
 * is not enough), with a slow safety-net poll behind it. So an idle wait
 * costs next to nothing, and a busy one does not pay for a file event per
 * commit of every process. Where file events prove unreliable (some file systems,
 * macOS for WAL writes), the feed notices that changes arrive without
 * events and falls back to a fast poll. Commits made by this process do not
 * move its own `data_version`, so writers here call `notify()`.
 *
 * All of it runs only while someone waits, from one set of timers per
 * process however many calls wait. A store that pushes other processes'
 * commits (PostgreSQL's LISTEN/NOTIFY) needs none of it: the feed then runs
 * no timer and no watcher, and checks only when the store says so.
 *
 * A write that changes only some topics' state says which (`notify(topics)`,
 * and the PostgreSQL store's notification carries them), and a waiter may
 * say which topics it waits on: it is then woken only by changes to those
 * topics or by changes that named none. A commit of another SQLite process
 * names none (`data_version` cannot say), so it wakes everyone.
 *
 * A waiter may also say what it would do once woken (`deliver`): a store
 * that can (SQLite, for a write that commits alone) runs that inside the
 * transaction of a write to the waiter's topic, right after it, and the
 * wait ends with what it returned, once committed. The waiter is answered
 * by the commit that woke it, without a transaction, a turn in the write
 * line or a read of its own.
 *
 * A waiter takes a `mark()` *before* it checks for new data and waits on
 * that mark, so a commit that lands between the check and the wait is never
 * missed: the feed compares every later reading with the version in the
 * mark, never with a fresh read taken when the wait starts (which would
 * count a commit made in between as already seen).
 *
 * @module
 */

import { pauseCallDeadline } from "../store/call_deadline.ts";
import type { ChangedTopics, FollowingWrite, Store } from "../store/mod.ts";

/** What a waiter has seen: the database's version and the count of changes heard. */
export interface ChangeMark {
  readonly dataVersion: number;
  readonly heard: number;
}

/** Options of {@linkcode ChangeFeed.wait}. */
export interface WaitOnChanges {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Wake only for changes to these topics (or changes that name none); default: any change. */
  topics?: readonly string[] | undefined;
  /**
   * What the waiter would do once woken by a write to one of its `topics`,
   * to be run, where the store can, inside that write's transaction
   * ({@linkcode Store.setFollowers}); undefined when it has nothing to do
   * (it waits on). What it returns ends the wait as `{ delivered }`.
   */
  deliver?: (() => unknown) | undefined;
}

/** A wait ended by its `deliver`, run in the transaction of a write it waited for. */
export interface Delivered {
  delivered: unknown;
}

/** One parked waiter. */
interface Waiter {
  /** The topics it waits on (undefined: all). */
  topics: readonly string[] | undefined;
  deliver: (() => unknown) | undefined;
  /** Ends its wait with what `deliver` returned. */
  delivered(value: unknown): void;
}

/** Options of {@linkcode ChangeFeed}. */
export interface ChangeFeedOptions {
  /** Interval of the burst of checks after a file event. */
  fastMs?: number;
  /** Interval of the checks when file events are not available. */
  pollMs?: number;
  /** Interval of the safety-net check while file events work. */
  slowMs?: number;
  /** How long a burst of fast checks lasts after a file event. */
  burstMs?: number;
  /** How long after the last change polling stays at `pollMs`. */
  hotMs?: number;
  /** Use file events (default true); false always polls at `pollMs`. */
  watch?: boolean;
  /** Opens a directory watcher; `Deno.watchFs` unless a test injects one. */
  watchFs?: (dir: string) => DirWatcher;
  /**
   * Test seam: runs after a wait has found nothing new since its mark and
   * before it starts waiting, so a test can commit from another connection
   * exactly there and prove the wait still wakes.
   */
  beforeWait?: () => void | Promise<void>;
}

/** The part of `Deno.FsWatcher` the feed uses. */
export interface DirWatcher extends AsyncIterable<{ paths: string[] }> {
  close(): void;
}

/** Changes seen without a file event before events are declared unreliable. */
const MISSES_BEFORE_FALLBACK = 3;

/**
 * Waiters answered inside one write's transaction at most: each is a `sync`
 * round the writer's own answer waits for, so a topic with many waiting
 * agents wakes the rest as before (they read at once, in their own group).
 */
const MAX_FOLLOWERS = 8;

/** Changes heard that the feed remembers the topics of; a mark older than that sees a change. */
const REMEMBERED_CHANGES = 256;

/** One per process: tells waiters that the database may have changed. */
export class ChangeFeed {
  readonly #store: Store;
  readonly #fastMs: number;
  readonly #pollMs: number;
  readonly #slowMs: number;
  readonly #burstMs: number;
  readonly #hotMs: number;
  /** Each parked waiter, by its wake function. */
  readonly #waiters = new Map<() => void, Waiter>();
  /** Changes heard (commits of this process, pushed notifications) and the topics of the latest. */
  #heard = 0;
  readonly #recent: ChangedTopics[] = [];
  #lastVersion = -1;
  #seen = -1;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #watchFs: (dir: string) => DirWatcher;
  readonly #beforeWait: (() => void | Promise<void>) | undefined;
  #watcher: DirWatcher | undefined;
  #watch: "on" | "off";
  #burstUntil = 0;
  #hotUntil = 0;
  #eventSinceChange = false;
  #misses = 0;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(store: Store, options: ChangeFeedOptions = {}) {
    this.#store = store;
    this.#fastMs = options.fastMs ?? 1;
    this.#pollMs = options.pollMs ?? 2;
    this.#slowMs = options.slowMs ?? 250;
    this.#burstMs = options.burstMs ?? 25;
    this.#hotMs = options.hotMs ?? 2000;
    this.#watch = options.watch === false || store.path === ":memory:" ? "off" : "on";
    this.#watchFs = options.watchFs ?? ((dir) => Deno.watchFs(dir, { recursive: false }));
    this.#beforeWait = options.beforeWait;
    if (store.subscribe) {
      this.#watch = "off";
      this.#unsubscribe = store.subscribe((topics) => this.#hear(topics));
    }
    store.setFollowers?.((topics) => this.#followers(topics));
  }

  /** The current state, to be passed to {@linkcode ChangeFeed.wait}. */
  mark(): ChangeMark {
    return { dataVersion: this.#unsubscribe ? 0 : this.#version(), heard: this.#heard };
  }

  /** Tell waiters that this process committed, changing only `topics` if given. */
  notify(topics?: ChangedTopics): void {
    this.#hotUntil = performance.now() + this.#hotMs;
    this.#hear(topics);
  }

  /** Number of calls waiting now (for status output). */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** How other processes' commits are noticed: pushed by the database, file events, or polling. */
  get mode(): "notifications" | "events" | "polling" {
    if (this.#unsubscribe) return "notifications";
    return this.#watch === "on" ? "events" : "polling";
  }

  /**
   * Resolve with `"changed"` once anything has committed since `mark`, or
   * with `"timeout"` after `timeoutMs`.
   *
   * @throws the signal's reason when `signal` aborts
   */
  wait(mark: ChangeMark, options: WaitOnChanges): Promise<"changed" | "timeout" | Delivered> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#changedSince(mark, options.topics)) return Promise.resolve("changed");
    // A wait is on purpose, not on the database: the call's deadline waits with it.
    const started = performance.now();
    const parked = this.#beforeWait
      ? Promise.resolve(this.#beforeWait()).then(() => this.#park(mark, options))
      : this.#park(mark, options);
    const paused = () => pauseCallDeadline(performance.now() - started);
    return parked.then((outcome) => {
      paused();
      return outcome;
    }, (error) => {
      paused();
      throw error;
    });
  }

  /** Wait for a change after `mark`, which {@linkcode ChangeFeed.wait} found current. */
  #park(mark: ChangeMark, options: WaitOnChanges): Promise<"changed" | "timeout" | Delivered> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Only after the test seam's await: a change heard meanwhile woke nobody.
    if (this.#heardSince(mark, options.topics)) return Promise.resolve("changed");
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timeout);
        signal?.removeEventListener("abort", abort);
        this.#waiters.delete(wake);
        if (this.#waiters.size === 0) this.#idle();
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
      this.#waiters.set(wake, {
        topics: options.topics,
        deliver: options.deliver,
        delivered: (value) => {
          finish();
          resolve({ delivered: value });
        },
      });
      this.#busy(mark);
    });
  }

  /** Stop watching and polling, and release every waiter as changed (shutdown). */
  close(): void {
    this.#wakeAll();
    this.#idle();
    this.#watch = "off";
    this.#unsubscribe?.();
  }

  #changedSince(mark: ChangeMark, topics: readonly string[] | undefined): boolean {
    return this.#heardSince(mark, topics) ||
      (!this.#unsubscribe && this.#version() !== mark.dataVersion);
  }

  /** Whether a change heard after `mark` concerns a waiter on `topics`. */
  #heardSince(mark: ChangeMark, topics: readonly string[] | undefined): boolean {
    const missed = this.#heard - mark.heard;
    if (missed <= 0) return false;
    if (missed > this.#recent.length) return true; // older than what is remembered
    return this.#recent.slice(-missed).some((changed) => concerns(changed, topics));
  }

  /** A change (of this process, or pushed by the store): remember it and wake who it concerns. */
  #hear(topics: ChangedTopics): void {
    this.#heard++;
    this.#recent.push(topics);
    if (this.#recent.length > REMEMBERED_CHANGES) this.#recent.shift();
    for (const [wake, waiter] of [...this.#waiters]) {
      if (concerns(topics, waiter.topics)) wake();
    }
  }

  /**
   * The parked waiters that would do something once woken by a write to
   * `topics`, the longest parked first, at most {@linkcode MAX_FOLLOWERS}.
   */
  #followers(topics: readonly string[]): FollowingWrite[] {
    const followers: FollowingWrite[] = [];
    for (const waiter of this.#waiters.values()) {
      if (followers.length === MAX_FOLLOWERS) break;
      const { deliver } = waiter;
      if (deliver && waiter.topics?.some((topic) => topics.includes(topic))) {
        followers.push({ run: deliver, done: (value) => waiter.delivered(value) });
      }
    }
    return followers;
  }

  #version(): number {
    try {
      this.#lastVersion = this.#store.dataVersion();
    } catch {
      // An unusable store: keep the last value; the waiter's own query reports the error.
    }
    return this.#lastVersion;
  }

  /**
   * Someone waits: make sure changes will be noticed. The baseline is the
   * waiter's mark, so a commit after it (even one made a microsecond ago,
   * before this wait began) is a change. With a timer already running, the
   * baseline is older still, and its next check wakes everyone anyway.
   */
  #busy(mark: ChangeMark): void {
    if (this.#timer === undefined) {
      this.#seen = mark.dataVersion;
      this.#schedule();
    }
  }

  /** Nobody waits: stop polling and watching. */
  #idle(): void {
    this.#stopTimer();
    this.#closeWatcher();
  }

  #schedule(): void {
    // No other process can write to memory; a pushing store calls #check itself.
    if (this.#store.path === ":memory:" || this.#unsubscribe) return;
    const now = performance.now();
    let interval: number;
    if (this.#watch === "off" || now < this.#hotUntil) {
      this.#closeWatcher();
      interval = this.#pollMs;
    } else {
      if (!this.#watcher) {
        this.#openWatcher();
        this.#check(false); // a commit may have landed between the last poll and the watch
        if (this.#waiters.size === 0) return;
      }
      interval = now < this.#burstUntil ? this.#fastMs : this.#slowMs;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#check();
      if (this.#waiters.size > 0) this.#schedule();
    }, interval);
    Deno.unrefTimer(this.#timer);
  }

  /** Wake waiters if the database changed; `judgeEvents` counts a change without a file event. */
  #check(judgeEvents = true): void {
    const now = this.#version();
    if (now === this.#seen) return;
    this.#seen = now;
    this.#hotUntil = performance.now() + this.#hotMs;
    if (judgeEvents && this.#watcher) {
      if (this.#eventSinceChange) {
        this.#misses = 0;
      } else if (++this.#misses >= MISSES_BEFORE_FALLBACK) {
        // Commits keep arriving without file events: stop trusting them.
        this.#closeWatcher();
        this.#watch = "off";
      }
    }
    this.#eventSinceChange = false;
    this.#wakeAll();
  }

  #openWatcher(): void {
    const path = this.#store.path;
    const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
    let watcher: DirWatcher;
    try {
      watcher = this.#watchFs(cut > 0 ? path.slice(0, cut) : ".");
    } catch {
      this.#watch = "off";
      return;
    }
    this.#watcher = watcher;
    (async () => {
      for await (const event of watcher) {
        if (!event.paths.some((p) => p.startsWith(path))) continue;
        this.#eventSinceChange = true;
        if (this.#waiters.size === 0) continue;
        const bursting = performance.now() < this.#burstUntil;
        this.#burstUntil = performance.now() + this.#burstMs;
        if (bursting) continue; // the burst's own checks will see it
        this.#stopTimer();
        this.#check();
        if (this.#waiters.size > 0) this.#schedule();
      }
    })().catch(() => {
      if (this.#watcher === watcher) this.#watch = "off";
    });
  }

  #closeWatcher(): void {
    try {
      this.#watcher?.close();
    } catch {
      // already closed
    }
    this.#watcher = undefined;
  }

  #stopTimer(): void {
    // Only with a timer: the first clearTimeout of a process loads Deno's timers (~7 ms).
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters.keys()]) wake();
  }
}

/** Whether a change to `changed` (undefined: anything) concerns a waiter on `waitsOn` (undefined: all). */
function concerns(changed: ChangedTopics, waitsOn: readonly string[] | undefined): boolean {
  return changed === undefined || waitsOn === undefined ||
    changed.some((topic) => waitsOn.includes(topic));
}
