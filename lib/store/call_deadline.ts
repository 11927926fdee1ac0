/**
 * One deadline for a call's database work, end to end.
 *
 * A call (an MCP tool call, a REST request) may reach the database several
 * times: its reads, its write, a reconnect, a retry on a fresh connection,
 * a wait through a server's restart, and, on a node whose thread another
 * call holds, its turn. Each of those had its own limit, and a stalled
 * host's own call added them up to 50 s. Here a call gets one deadline
 * (`AGENT_BUS_BUSY_TIMEOUT_MS` + 2 s: the longest lock wait, and time to say
 * so): no wait on the database may last past it, so the call fails with
 * `DB_UNAVAILABLE` by then whatever goes wrong. Time the call spends waiting
 * on purpose (a `sync` or `msg_wait` waiting for messages) is not the
 * database's: after such a wait the call has its whole budget again (a
 * long wait woken many times by others' messages looks each time, and
 * those looks must not add up to a deadline on a busy machine), so what is
 * bounded is each stretch of database work between waits.
 *
 * The deadline travels with the call through its `await`s
 * (`AsyncLocalStorage`); work outside any call (the indexer, maintenance)
 * keeps each step's own limits.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** When a call's database time runs out (`performance.now()` ms). */
interface Deadline {
  at: number;
  /** The database time each stretch of the call gets. */
  budgetMs: number;
}

const calls = new AsyncLocalStorage<Deadline>();

/** Margin of the deadline over the longest lock wait. */
export const DEADLINE_MARGIN_MS = 2000;

/**
 * Run `fn` as one call with `budgetMs` of database time (a call already
 * running keeps its own deadline).
 */
export function withCallDeadline<T>(budgetMs: number, fn: () => Promise<T>): Promise<T> {
  if (calls.getStore() !== undefined) return fn();
  return calls.run({ at: performance.now() + budgetMs, budgetMs }, fn);
}

/** Run the synchronous `fn` with at most `ms` of database time (less when the call has less). */
export function atMost<T>(ms: number, fn: () => T): T {
  const outer = calls.getStore()?.at ?? Infinity;
  return calls.run({ at: Math.min(outer, performance.now() + ms), budgetMs: ms }, fn);
}

/** The database time the running call has left, in ms (Infinity outside a call). */
export function callTimeLeft(): number {
  const deadline = calls.getStore();
  return deadline === undefined ? Infinity : deadline.at - performance.now();
}

/**
 * The running call waited `ms` on purpose (not for the database): its
 * deadline moves on by as much, and at least to a whole budget from now.
 */
export function pauseCallDeadline(ms: number): void {
  const deadline = calls.getStore();
  if (deadline) deadline.at = Math.max(deadline.at + ms, performance.now() + deadline.budgetMs);
}
