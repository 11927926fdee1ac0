/**
 * What every waiting call shares (`sync`, `ask`, `teacher_drain`): the cap
 * on `wait_seconds`, the hooks a tool passes in, progress reports, and the
 * wait itself, on the process's {@linkcode ChangeFeed}: no writes while
 * waiting, a wake-up within milliseconds of a commit by any process, and an
 * immediate stop when the client cancels.
 *
 * @module
 */

import { invalidArgument, type Warning } from "../errors.ts";
import type { Bus } from "./mod.ts";

/** Hooks of a waiting call. */
export interface WaitOptions {
  /** Aborts the wait (the client cancelled). */
  signal?: AbortSignal;
  /** Called every `AGENT_BUS_PROGRESS_SECONDS` of waiting. */
  onWaitProgress?: (elapsedSeconds: number, totalSeconds: number) => void;
  /** The topics whose changes can end the wait (default: a change anywhere can). */
  topics?: readonly string[];
}

/**
 * `wait_seconds` within `AGENT_BUS_MAX_WAIT_SECONDS`; a larger value is
 * capped and a `WAIT_SECONDS_CAPPED` warning added to `warnings`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a negative value
 */
export function capWaitSeconds(bus: Bus, requested: number, warnings: Warning[]): number {
  if (requested < 0) throw invalidArgument("wait_seconds must be an int >= 0");
  if (requested <= bus.config.maxWaitSeconds) return requested;
  warnings.push({
    code: "WAIT_SECONDS_CAPPED",
    message: `wait_seconds=${requested} was capped at ${bus.config.maxWaitSeconds}`,
    context: { requested, max: bus.config.maxWaitSeconds },
  });
  return bus.config.maxWaitSeconds;
}

/**
 * Report progress every `AGENT_BUS_PROGRESS_SECONDS` (10 by default) while
 * waiting; clear the returned timer.
 */
export function startProgress(
  bus: Bus,
  options: WaitOptions,
  totalSeconds: number,
): ReturnType<typeof setInterval> | undefined {
  const report = options.onWaitProgress;
  if (!report) return undefined;
  const started = performance.now();
  return setInterval(() => {
    report(Math.round((performance.now() - started) / 1000), totalSeconds);
  }, bus.config.progressSeconds * 1000);
}

/**
 * Wait until `check` (a read) returns something other than undefined, for
 * at most `seconds`. `check` runs at once, then after every commit any
 * process makes (that concerns `options.topics`, when given).
 *
 * @returns what `check` returned, or undefined at the deadline or when cancelled
 */
export async function waitFor<T>(
  bus: Bus,
  check: () => T | undefined,
  seconds: number,
  options: WaitOptions = {},
): Promise<T | undefined> {
  const deadline = performance.now() + seconds * 1000;
  const progress = startProgress(bus, options, seconds);
  try {
    for (;;) {
      const mark = bus.changes.mark();
      const found = check();
      if (found !== undefined) return found;
      const remaining = deadline - performance.now();
      if (remaining <= 0 || options.signal?.aborted) return undefined;
      const outcome = await bus.changes.wait(mark, {
        timeoutMs: remaining,
        signal: options.signal,
        topics: options.topics,
      })
        .catch(() => "cancelled" as const);
      if (outcome === "timeout" || outcome === "cancelled") return check();
    }
  } finally {
    clearInterval(progress);
  }
}

/** A step of {@linkcode onEachChange} that wants to run again at once, without waiting. */
export const AGAIN: unique symbol = Symbol("again");

/**
 * Run `step` now, and again after every change that concerns `topics` (any
 * change when absent) or after `idleMs` without one, until `signal` aborts
 * or `step` returns a value: the watch loop of a stream, a follow or a push
 * subscription. The mark is taken before each step, so a commit made while
 * the step reads is never missed. `idleMs` (default a minute) may be
 * computed after each step.
 *
 * @returns what `step` returned, or undefined when `signal` aborted
 */
export async function onEachChange<T>(
  bus: Bus,
  options: {
    signal: AbortSignal;
    topics?: readonly string[];
    idleMs?: number | (() => number);
  },
  step: () => T | typeof AGAIN | undefined | Promise<T | typeof AGAIN | undefined>,
): Promise<T | undefined> {
  const { signal, topics, idleMs = 60_000 } = options;
  while (!signal.aborted) {
    const mark = bus.changes.mark();
    const outcome = await step();
    if (outcome === AGAIN) continue;
    if (outcome !== undefined) return outcome;
    const timeoutMs = typeof idleMs === "function" ? idleMs() : idleMs;
    await bus.changes.wait(mark, { timeoutMs, signal, topics }).catch(() => {});
  }
  return undefined;
}
