/**
 * Sizes of the reliability suite. `deno task test:stress` runs the full
 * sizes of the issue; CI sets `AGENT_BUS_STRESS=reduced` to keep its run
 * short.
 *
 * @module
 */

/** True when the reduced sizes are asked for. */
export const REDUCED = Deno.env.get("AGENT_BUS_STRESS") === "reduced";

/** `full` normally, `reduced` under CI. */
export function size(full: number, reduced: number): number {
  return REDUCED ? reduced : full;
}

/** A small seeded PRNG (mulberry32), so a failing run can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: `AGENT_BUS_STRESS_SEED`, or a fresh one (printed by the tests). */
export const SEED = Number(
  Deno.env.get("AGENT_BUS_STRESS_SEED") ?? Math.floor(Math.random() * 2 ** 31),
);
