/**
 * What the secret screen (`lib/bus/secrets.ts`) costs per message: typical
 * texts (a chat line, a page of code with URLs, a 64 KiB log), one that
 * holds a credential, and the slowest of the pathological near misses,
 * each screened many times in this process.
 *
 * @module
 */

import { screenSecrets } from "../lib/bus/secrets.ts";
import { PATHOLOGICAL_TEXTS } from "../tests/_helpers/pathological.ts";
import { type Distribution, distribution } from "./_stats.ts";

/** One text's cost. */
export interface SecretsCost {
  name: string;
  chars: number;
  /** Microseconds per screening. */
  micros: Distribution;
}

const LINE = "I moved the retry into client.ts; the backoff doubles up to 30 s, see PR #42. ";
const CODE = `const url = "https://api.example.com/v1/items?page=2";
export async function fetchAll(token: string) { // token comes from process.env.API_TOKEN
  const response = await fetch(url, { headers: { authorization: \`Bearer \${token}\` } });
  return (await response.json()) as Item[];
}
`;
const CREDENTIAL = "deploy with gh" + "p_x7Kq9ZrT2mWp4LbN8vYc3HdJ6sFg1QeR5uAo please";

function timeIt(text: string, rounds: number): Distribution {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    screenSecrets(text, { mode: "redact", field: "content" });
    samples.push((performance.now() - started) * 1000);
  }
  return distribution(samples);
}

/** Screen each text `rounds` times; the slowest pathological text is one row. */
export function benchSecrets(rounds: number): SecretsCost[] {
  const texts = [
    { name: "a chat line (80 chars)", text: LINE },
    { name: "a page of code with URLs (4 KiB)", text: CODE.repeat(Math.ceil(4096 / CODE.length)) },
    { name: "a 64 KiB log", text: LINE.repeat(Math.ceil(65_536 / LINE.length)).slice(0, 65_536) },
    { name: "a line holding a GitHub token", text: CREDENTIAL },
  ];
  const rows = texts.map(({ name, text }) => ({
    name,
    chars: text.length,
    micros: timeIt(text, rounds),
  }));
  const worst = PATHOLOGICAL_TEXTS.map(({ name, text }) => ({
    name: `slowest pathological 64 KiB text (${name})`,
    chars: text.length,
    micros: timeIt(text, Math.max(3, Math.floor(rounds / 20))),
  })).sort((a, b) => b.micros.p50 - a.micros.p50)[0]!;
  return [...rows, worst];
}
