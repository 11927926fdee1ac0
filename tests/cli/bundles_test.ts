/**
 * The bundles what runs from source is (`lib/cli/hook/hook.bundle.js` for
 * the hooks, `lib/entry.bundle.js` for an MCP client's entry) are what
 * `deno task bundle` makes of the committed sources, and each is one
 * module: a run loads nothing else unless it needs more than its common
 * path (the hook's answer over the database, the entry's whole program),
 * which each names by URL, not in a literal `import()` (Deno reads those,
 * and everything they import, before the first line runs). What a hook can
 * load needs no lock file: the packages it reaches depend on nothing.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type Bundle, BUNDLES, writeBundle } from "../../scripts/bundle.ts";
import { ENTRY_PATH, HOOK_PATH } from "../../lib/launch.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const POSTGRES_WORKER = new URL("../../lib/store/postgres/worker.ts", import.meta.url).pathname;

/** The committed `bundle` as it is, after checking that the sources still bundle to it. */
async function freshBundle(bundle: Bundle): Promise<string> {
  await using tmp = await tmpDir();
  const fresh = new URL(`file://${tmp.path}/fresh.bundle.js`);
  await writeBundle(bundle, fresh);
  const committed = await Deno.readTextFile(bundle.out);
  assert.ok(
    committed === await Deno.readTextFile(fresh),
    `${bundle.out.pathname} is stale: run \`deno task bundle\``,
  );
  return committed;
}

/** The modules `code` imports (static or dynamic, by a literal name). */
function importsOf(code: string): string[] {
  return [...code.matchAll(/\bimport\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
}

Deno.test("the committed hook bundle is what hook.ts bundles to, and what hooks run", async () => {
  const committed = await freshBundle(BUNDLES.hook);
  assert.equal(HOOK_PATH, BUNDLES.hook.out.pathname);
  // It imports nothing by name (Deno would read it, and all behind it, at every start): the
  // answer over the database only when no bus answers, from source beside it.
  assert.deepEqual(importsOf(committed), []);
  assert.match(committed, /new URL\("\.\/here\.ts", import\.meta\.url\)/);
  await Deno.stat(new URL("./here.ts", BUNDLES.hook.out));
});

Deno.test("the committed entry bundle is what entry.ts bundles to, and what clients start", async () => {
  const committed = await freshBundle(BUNDLES.entry);
  assert.equal(ENTRY_PATH, BUNDLES.entry.out.pathname);
  // It imports nothing by name: the whole program only when it is needed, from this checkout.
  assert.deepEqual(importsOf(committed), []);
  assert.match(committed, /new URL\("lib\/cli\/mod\.ts", CHECKOUT_URL\)/);
});

/** The npm packages the module graph of `path` reaches, and what each depends on. */
async function packagesOf(path: string): Promise<Map<string, string[]>> {
  const { stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", path],
    stdout: "piped",
    stderr: "null",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { kind?: string; npmPackage?: string }[];
    npmPackages: Record<string, { dependencies: string[] }>;
  };
  const reached = info.modules.flatMap((module) => module.npmPackage ? [module.npmPackage] : []);
  return new Map(reached.map((name) => [name, info.npmPackages[name]!.dependencies]));
}

Deno.test("what a hook run can load reaches only packages that depend on nothing (no lock needed)", async () => {
  // The hook, its answer over the database, and the PostgreSQL worker that answer may start.
  const graphs = [HOOK_PATH, new URL("./here.ts", BUNDLES.hook.out).pathname, POSTGRES_WORKER];
  const reached = new Map<string, string[]>();
  for (const path of graphs) {
    for (const [name, deps] of await packagesOf(path)) reached.set(name, deps);
  }
  assert.ok(
    [...reached.keys()].some((name) => name.startsWith("postgres@")),
    [...reached.keys()].join(),
  );
  for (const [name, deps] of reached) assert.deepEqual(deps, [], `${name} depends on ${deps}`);
});
