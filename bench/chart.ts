/**
 * The picture of a run: one SVG with the delivery-latency distribution (a
 * histogram of every sample, p50 and p99 marked) and the throughput by
 * number of senders (one and ten messages per call). Plain SVG text, no
 * library: it renders on GitHub and in any browser.
 *
 * @module
 */

import { count, type Distribution, ms } from "./_stats.ts";
import type { ThroughputResult } from "./throughput.ts";

const WIDTH = 960;
const HEIGHT = 340;
const PANEL = { top: 60, bottom: 290, width: 420 };
const FONT = `font-family="system-ui, sans-serif"`;

/** Escape text for SVG. */
const text = (value: string) =>
  value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** A histogram of `latency`'s samples up to its p99 (and a bit), with p50 and p99 marked. */
function latencyPanel(latency: Distribution, left: number): string {
  const bins = 30;
  const top = Math.max(latency.p99 * 1.25, 1);
  const counts = new Array<number>(bins).fill(0);
  for (const value of latency.values) counts[Math.min(bins - 1, Math.floor(value / top * bins))]!++;
  const highest = Math.max(...counts, 1);
  const plotHeight = PANEL.bottom - PANEL.top;
  const barWidth = PANEL.width / bins;
  const x = (value: number) => left + Math.min(value / top, 1) * PANEL.width;
  const bars = counts.map((n, i) => {
    const h = n / highest * plotHeight;
    return `<rect x="${(left + i * barWidth).toFixed(1)}" y="${(PANEL.bottom - h).toFixed(1)}" ` +
      `width="${(barWidth - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="#4c78a8"/>`;
  });
  const marker = (value: number, label: string, color: string) =>
    `<line x1="${x(value).toFixed(1)}" x2="${x(value).toFixed(1)}" y1="${PANEL.top}" ` +
    `y2="${PANEL.bottom}" stroke="${color}" stroke-dasharray="4 3"/>` +
    `<text x="${(x(value) + 4).toFixed(1)}" y="${PANEL.top + 12}" ${FONT} font-size="11" ` +
    `fill="${color}">${text(`${label} ${ms(value)}`)}</text>`;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    `<text x="${(left + f * PANEL.width).toFixed(1)}" y="${PANEL.bottom + 16}" ${FONT} ` +
    `font-size="11" text-anchor="middle">${text(ms(f * top))}</text>`
  );
  return [
    `<text x="${left}" y="${PANEL.top - 14}" ${FONT} font-size="13" font-weight="600">` +
    text(
      `Delivery latency (${latency.samples} samples, ` +
        `${latency.values.filter((v) => v > top).length} above ${ms(top)})`,
    ) + `</text>`,
    ...bars,
    `<line x1="${left}" x2="${left + PANEL.width}" y1="${PANEL.bottom}" y2="${PANEL.bottom}" ` +
    `stroke="#333"/>`,
    ...ticks,
    marker(latency.p50, "p50", "#2a7f2a"),
    marker(latency.p99, "p99", "#c0392b"),
  ].join("\n");
}

/** Bars of messages per second, by number of senders, for one and ten messages per call. */
function throughputPanel(runs: ThroughputResult[], left: number): string {
  const senders = [...new Set(runs.map((r) => r.senders))].sort((a, b) => a - b);
  const perCalls = [...new Set(runs.map((r) => r.perCall))].sort((a, b) => a - b);
  const colors = ["#f58518", "#54a24b", "#b279a2"];
  const highest = Math.max(...runs.map((r) => r.perSecond), 1);
  const plotHeight = PANEL.bottom - PANEL.top;
  const group = PANEL.width / senders.length;
  const bar = (group - 20) / perCalls.length;
  const parts: string[] = [
    `<text x="${left}" y="${PANEL.top - 14}" ${FONT} font-size="13" font-weight="600">` +
    `Throughput by senders (messages/s)</text>`,
    `<line x1="${left}" x2="${left + PANEL.width}" y1="${PANEL.bottom}" y2="${PANEL.bottom}" ` +
    `stroke="#333"/>`,
  ];
  senders.forEach((n, g) => {
    perCalls.forEach((perCall, k) => {
      const run = runs.find((r) => r.senders === n && r.perCall === perCall);
      if (!run) return;
      const h = run.perSecond / highest * (plotHeight - 16);
      const x = left + g * group + 10 + k * bar;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${(PANEL.bottom - h).toFixed(1)}" width="${
          (bar - 2).toFixed(1)
        }" height="${h.toFixed(1)}" fill="${colors[k % colors.length]}"/>`,
        `<text x="${(x + bar / 2).toFixed(1)}" y="${(PANEL.bottom - h - 4).toFixed(1)}" ${FONT} ` +
          `font-size="10" text-anchor="middle">${text(count(run.perSecond))}</text>`,
      );
    });
    parts.push(
      `<text x="${(left + g * group + group / 2).toFixed(1)}" y="${PANEL.bottom + 16}" ${FONT} ` +
        `font-size="11" text-anchor="middle">${n} sender${n === 1 ? "" : "s"}</text>`,
    );
  });
  perCalls.forEach((perCall, k) => {
    const y = PANEL.bottom + 34;
    const x = left + k * 150;
    parts.push(
      `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${colors[k % colors.length]}"/>`,
      `<text x="${x + 14}" y="${y}" ${FONT} font-size="11">${perCall} message${
        perCall === 1 ? "" : "s"
      } per call</text>`,
    );
  });
  return parts.join("\n");
}

/** The SVG of one run. */
export function runChart(
  heading: string,
  latency: Distribution,
  throughput: ThroughputResult[],
): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" ` +
    `viewBox="0 0 ${WIDTH} ${HEIGHT}">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="20" y="22" ${FONT} font-size="12" fill="#555">${text(heading)}</text>`,
    latencyPanel(latency, 30),
    throughputPanel(throughput, 510),
    `</svg>`,
    "",
  ].join("\n");
}
