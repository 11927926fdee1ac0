/**
 * Guards the module graph: dependencies point one way
 * (cli -> transports -> mcp/console -> bus/search -> store -> base), and SQL
 * is written only in lib/store.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { PROFILE_NAMES } from "../lib/mcp/profiles/mod.ts";
import denoJson from "../deno.json" with { type: "json" };

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * What each layer may import, besides itself. "base" is lib/*.ts and
 * deno.json; "runtime" is lib/runtime.ts, where a process opens its store,
 * bus and search engine (lib/bus_runtime.ts, the bus alone, for the hooks): above them,
 * nothing reaches lib/store but through them.
 */
const ALLOWED: Record<string, string[]> = {
  base: [],
  store: ["base"],
  bus: ["store", "base"],
  search: ["store", "base"],
  runtime: ["bus", "search", "store", "base"],
  mcp: ["bus", "search", "base"],
  console: ["bus", "search", "base"],
  transports: ["runtime", "mcp", "console", "bus", "search", "base"],
  cli: ["runtime", "transports", "mcp", "console", "bus", "search", "base"],
};

function layerOf(path: string): string | undefined {
  if (!path.startsWith(ROOT)) return undefined;
  const rel = path.slice(ROOT.length);
  if (rel === "deno.json") return "base";
  if (rel === "lib/runtime.ts" || rel === "lib/bus_runtime.ts") return "runtime";
  const match = /^lib\/(?:([^/]+)\/)?[^/]+$/.exec(rel) ?? /^lib\/([^/]+)\//.exec(rel);
  if (!match) return undefined;
  return match[1] ?? "base";
}

/** A module of Deno's module graph (`deno info --json`), as far as the rule reads it. */
interface GraphModule {
  local?: string;
  dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
}

/**
 * Every module a process of ours can load: what `main.ts` and the thin
 * entries reach, and what the compiled binary must be told to include
 * because only a `Worker` or a dynamic import reaches it (the compile
 * task's `--include`s: a new worker is covered once it can be compiled).
 */
async function programGraph(): Promise<{ roots: string[]; modules: GraphModule[] }> {
  const includes = [...denoJson.tasks.compile.command.matchAll(/--include (\S+)/g)].map((m) =>
    m[1]!
  );
  const roots = ["main.ts", "entry.ts", "hook.ts", ...includes];
  const modules = new Map<string, GraphModule>();
  for (const root of roots) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `${ROOT}${root}`],
      stdout: "piped",
    }).output();
    const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as { modules: GraphModule[] };
    for (const module of graph.modules) {
      if (module.local) modules.set(module.local, module);
    }
  }
  return { roots, modules: [...modules.values()] };
}

Deno.test("lib/ imports only point down the layer stack; entry points open the store only through lib/runtime.ts", async () => {
  const graph = await programGraph();
  assert.ok(graph.roots.length > 5, `the workers are among the roots: ${graph.roots}`);
  const violations: string[] = [];
  let checked = 0;
  for (const module of graph.modules) {
    const from = module.local && layerOf(module.local);
    if (!from) continue;
    for (const dep of module.dependencies ?? []) {
      const specifier = dep.code?.specifier ?? dep.type?.specifier;
      if (!specifier?.startsWith("file://")) continue;
      const to = layerOf(fileURLToPath(specifier));
      if (!to || to === from) continue;
      checked++;
      if (!ALLOWED[from]?.includes(to)) {
        violations.push(
          `${module.local!.slice(ROOT.length)} (${from}) imports ${to}: ${specifier}`,
        );
      }
    }
  }
  assert.ok(checked > 20, "the graph was read");
  assert.deepEqual(violations, []);
  // The transports, the CLI and the workers are in the graph (so the rule above covered them)
  // and open their store through the runtime.
  const local = new Set(graph.modules.map((m) => m.local?.slice(ROOT.length)));
  for (
    const entry of [
      "lib/transports/stdio.ts",
      "lib/transports/http/mod.ts",
      "lib/cli/mod.ts",
      "lib/transports/resident/session_worker.ts",
      "lib/store/postgres/worker.ts",
    ]
  ) {
    assert.ok(local.has(entry), `${entry} is reached from main.ts`);
  }
  assert.ok(local.has("lib/runtime.ts"));
});

Deno.test("SQL appears only in lib/store", async () => {
  const sql =
    /\b(SELECT\s+[\w*]|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|TRIGGER|VIRTUAL)|PRAGMA\s+\w)/;
  const offenders: string[] = [];
  for await (const path of walk(`${ROOT}lib`)) {
    if (path.includes("/lib/store/")) continue;
    const text = await Deno.readTextFile(path);
    text.split("\n").forEach((line, i) => {
      const comment = /^\s*(\*|\/\/|\/\*)/.test(line);
      if (!comment && sql.test(line)) {
        offenders.push(`${path.slice(ROOT.length)}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(offenders, []);
});

Deno.test("which profile does what is decided in lib/mcp/profiles alone: no profile name is compared elsewhere", async () => {
  const names = PROFILE_NAMES.join("|");
  // A profile's name in quotes on either side of ===, !==, a switch's case, or a ternary's test.
  const comparison = new RegExp(
    `(===|!==)\\s*["'\`](${names})["'\`]|["'\`](${names})["'\`]\\s*(===|!==)|\\bcase\\s+["'\`](${names})["'\`]\\s*:`,
  );
  const offenders: string[] = [];
  const files = [`${ROOT}main.ts`, `${ROOT}entry.ts`, `${ROOT}hook.ts`];
  for await (const path of walk(`${ROOT}lib`)) {
    if (!path.includes("/lib/mcp/profiles/")) files.push(path);
  }
  for (const path of files) {
    const text = await Deno.readTextFile(path);
    text.split("\n").forEach((line, i) => {
      if (comparison.test(line)) {
        offenders.push(`${path.slice(ROOT.length)}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  assert.ok(files.length > 100, "lib/ was read");
  assert.deepEqual(offenders, []);
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* walk(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}
