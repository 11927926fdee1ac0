/**
 * Statistics, formatting and waiting helpers for the benchmarks.
 *
 * @module
 */

import type { Peer } from "../tests/_helpers/peer.ts";

/** Percentiles of a sample, in its unit, and the sample itself (sorted). */
export interface Distribution {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  values: number[];
}

/** The q-quantile (0..1) of `values`, by nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

/** p50, p95, p99 and max of `values`. */
export function distribution(values: readonly number[]): Distribution {
  return {
    samples: values.length,
    p50: quantile(values, 0.5),
    p95: quantile(values, 0.95),
    p99: quantile(values, 0.99),
    max: Math.max(...values),
    values: [...values].sort((a, b) => a - b),
  };
}

/** Render rows as a Markdown table. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)]
    .join("\n");
}

/** Milliseconds with a sensible number of decimals. */
export function ms(value: number): string {
  return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`;
}

/** A whole number with thousands separators. */
export function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** Wait until `peer`'s stderr holds `text` at least `times` times (poll every ms). */
export async function waitForLog(peer: Peer, text: string, times: number): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (peer.stderr().split(text).length - 1 < times) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for "${text}" x${times}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
