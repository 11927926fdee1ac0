/**
 * A deterministic corpus of agent chatter for search benchmarks: prose
 * questions and answers, code snippets, file paths, stack traces and version
 * strings, with word frequencies that follow Zipf's law like real text.
 *
 * @module
 */

import { prng } from "../tests/stress/_size.ts";

const PROSE = (
  "the a to of and in is it that for on with as this be are was by at not or from but can we " +
  "should will when if so there have has do does did more about which what how why where all " +
  "one new some any other than then also only just into after before again because while " +
  "test tests build error errors fix fixed bug issue change changes code review merge branch " +
  "commit release deploy server client request response timeout retry cache database query " +
  "index table schema migration rollback config setting flag option default value values " +
  "function method class module package import export type types interface return returns " +
  "async await promise stream buffer file files path directory folder read write open close " +
  "lock locks busy wait waiting message messages topic topics agent agents queue worker job " +
  "jobs task tasks thread process memory leak performance latency throughput benchmark slow " +
  "fast crash panic exception trace stack log logs warning debug info user users session " +
  "token auth login permission denied allowed network socket port host connection refused " +
  "reset handshake certificate proxy header body json yaml toml parse parser serialize " +
  "encode decode unicode string number boolean array object null undefined missing found " +
  "update updated create created delete deleted rename renamed move moved copy copied " +
  "frontend backend api endpoint route router handler middleware component render state " +
  "hook effect props style layout button form input validation validator sanitize escape " +
  "sqlite postgres redis kafka docker kubernetes terraform github actions pipeline ci"
).split(" ");

const IDENT_PARTS = [
  "get",
  "set",
  "load",
  "save",
  "parse",
  "build",
  "render",
  "handle",
  "create",
  "update",
  "delete",
  "fetch",
  "sync",
  "flush",
  "open",
  "close",
  "read",
  "write",
  "user",
  "name",
  "message",
  "topic",
  "cursor",
  "token",
  "config",
  "cache",
  "index",
  "query",
  "result",
  "error",
  "state",
  "event",
  "stream",
  "buffer",
  "request",
  "response",
  "session",
  "queue",
];

const DIRS = ["src", "lib", "app", "pkg", "internal", "tests", "scripts", "docs", "cmd", "web"];
const SUBDIRS = ["store", "bus", "api", "auth", "ui", "core", "utils", "db", "net", "cli"];
const EXTS = ["ts", "py", "rs", "go", "tsx", "js", "sql", "md", "toml", "json"];

/** A generator of realistic messages; the same seed gives the same messages. */
export function corpus(seed = 42): () => string {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // Zipf: rank r is chosen with weight 1/r.
  const weights = PROSE.map((_, r) => 1 / (r + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const zipf = (): string => {
    let x = random() * total;
    for (let i = 0; i < PROSE.length; i++) {
      x -= weights[i]!;
      if (x <= 0) return PROSE[i]!;
    }
    return PROSE[PROSE.length - 1]!;
  };
  const camel = () => {
    const parts = [pick(IDENT_PARTS), pick(IDENT_PARTS), pick(IDENT_PARTS)].slice(
      0,
      2 + Math.floor(random() * 2),
    );
    return parts.map((p, i) => i === 0 ? p : p[0]!.toUpperCase() + p.slice(1)).join("");
  };
  const snake = () => [pick(IDENT_PARTS), pick(IDENT_PARTS)].join("_");
  const path = () => `${pick(DIRS)}/${pick(SUBDIRS)}/${snake()}.${pick(EXTS)}`;
  const version = () =>
    `v${Math.floor(random() * 5)}.${Math.floor(random() * 20)}.${Math.floor(random() * 30)}`;
  const sentence = () => {
    const words = Array.from({ length: 6 + Math.floor(random() * 14) }, zipf);
    if (random() < 0.3) words.splice(Math.floor(random() * words.length), 0, `\`${camel()}\``);
    if (random() < 0.2) words.splice(Math.floor(random() * words.length), 0, path());
    const text = words.join(" ");
    return text[0]!.toUpperCase() + text.slice(1) + (random() < 0.2 ? "?" : ".");
  };
  const code = () =>
    "```ts\n" +
    `export function ${camel()}(${snake()}: string): ${
      pick(["void", "number", "Promise<void>"])
    } {\n` +
    `  const ${camel()} = ${camel()}(${snake()});\n  return ${camel()}(${snake()});\n}\n` + "```";
  const trace = () =>
    `Error: ${sentence()}\n` +
    Array.from({ length: 2 + Math.floor(random() * 4) }, () =>
      `    at ${camel()} (${path()}:${1 + Math.floor(random() * 400)}:${
        1 + Math.floor(random() * 80)
      })`).join("\n");
  return () => {
    const kind = random();
    const parts = [sentence()];
    if (kind < 0.25) parts.push(code());
    else if (kind < 0.4) parts.push(trace());
    else if (kind < 0.5) parts.push(`Bumped to ${version()} in ${path()}.`);
    for (let i = Math.floor(random() * 3); i > 0; i--) parts.push(sentence());
    return parts.join("\n\n");
  };
}

/** Queries of the kinds agents type: words, pairs, identifiers, paths, phrases. */
export const SEARCH_QUERIES = [
  "database",
  "timeout",
  "migration rollback",
  "lock busy",
  "permission denied",
  "memory leak",
  "getUserName",
  "load_config",
  "src/store",
  "handshake certificate",
  "retry request",
  "parse json error",
  "kubernetes deploy",
  "unicode string",
  "benchmark latency throughput",
  "sqlite",
  "cursor",
  "session token",
  "stack trace",
  "how do we fix the build",
  "why is the server slow",
  "frontend component render",
  "validation sanitize",
  "rename topic",
  "the",
];
