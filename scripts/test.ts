/**
 * `deno task test`: the suite on both stores.
 *
 * First every test on SQLite files, with the servers they start attached
 * to a resident bus (the default). Then the tests that start servers again,
 * each server in a process of its own (`AGENT_BUS_STANDALONE=1`). Then,
 * where Debian's PostgreSQL is installed, a throwaway cluster
 * (`tests/_helpers/postgres.ts`) and the store-independent suites again
 * with `AGENT_BUS_TEST_STORE=postgres`: every profile's contract, the
 * transports, the console, the CLI and search, each test on a database of
 * its own. Without PostgreSQL that run is skipped with a message saying so.
 * Exits non-zero when any run fails.
 *
 * Every run has a home of its own (`HOME`, removed at the end), so that
 * nothing the tests start reaches the user's `~/.agent_bus`: the default
 * database, the socket and lock of a PostgreSQL database's resident bus,
 * the hook record. The caches the tests use stay where they are, named
 * explicitly: Deno's (`DENO_DIR`), the real clients' (`XDG_CACHE_HOME`)
 * and npm's (`npm_config_cache`).
 *
 * Arguments are passed to both `deno test` runs (e.g. `--filter sync`).
 *
 * `AGENT_BUS_TEST_LOAD=<n>` keeps n busy processes (one spinning loop each)
 * running beside both runs, as a busy machine would: the suite asserts
 * behaviour, so it must pass so too (`AGENT_BUS_TEST_LOAD=$(nproc)`).
 *
 * @module
 */

import { postgresBin, startPostgres } from "../tests/_helpers/postgres.ts";
import { TEST_BUS_IDLE } from "../tests/_helpers/peer.ts";
import { denoCacheDir } from "../tests/_helpers/run.ts";
import { counted } from "../lib/strings.ts";

/** Directories whose tests run against PostgreSQL too. */
const ON_BOTH_STORES = [
  "tests/mcp",
  "tests/bus",
  "tests/transports",
  "tests/console",
  "tests/cli",
  "tests/search",
];
/** Files there that touch no store: clients' config files. */
const STORE_FREE = new Set(["tests/cli/install_test.ts", "tests/cli/install_hooks_test.ts"]);

/** The test files of the PostgreSQL run. */
async function postgresFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const dir of ON_BOTH_STORES) {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isFile && path.endsWith("_test.ts") && !STORE_FREE.has(path)) files.push(path);
    }
  }
  return files.sort();
}

/** What a test file names when it starts agent-bus servers (`tests/_helpers/`). */
const STARTS_SERVERS = /\b(?:startPeer|serverCommand|startHttpServer|startFakeClient|hookShell)\(/;

/** The SQLite tests that start servers: run again with every server in a process of its own. */
async function standaloneFiles(): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (
        entry.isDirectory && !["stress", "clients", "_helpers", "fixtures"].includes(entry.name)
      ) {
        await walk(path);
      } else if (
        entry.isFile && path.endsWith("_test.ts") && !entry.name.startsWith("postgres_") &&
        STARTS_SERVERS.test(await Deno.readTextFile(path))
      ) {
        files.push(path);
      }
    }
  };
  await walk("tests");
  return files.sort();
}

const base = ["test", "--allow-all", "--parallel"];

/** The run's own home, and the caches of the user's that it keeps using. */
async function runHome(): Promise<{ path: string; env: Record<string, string> }> {
  const home = Deno.env.get("HOME") ?? "/tmp";
  const path = await Deno.makeTempDir({ prefix: "agent-bus-test-home-" });
  return {
    path,
    env: {
      HOME: path,
      DENO_DIR: await denoCacheDir(),
      XDG_CACHE_HOME: Deno.env.get("XDG_CACHE_HOME") ?? `${home}/.cache`,
      npm_config_cache: Deno.env.get("npm_config_cache") ?? `${home}/.npm`,
    },
  };
}
const home = await runHome();

function say(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}
const extra = Deno.args;

async function denoTest(args: string[], env: Record<string, string> = {}): Promise<boolean> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...base, ...extra, ...args],
    env: { ...TEST_BUS_IDLE, ...home.env, ...env },
    stdin: "null",
  }).spawn();
  return (await child.status).success;
}

/**
 * A loop that keeps one core busy and ends when the run that started it is
 * gone (its parent changes), so a killed run leaves no spinner behind.
 */
const SPIN = "const parent = Deno.ppid; for (;;) { for (let i = 0; i < 1e8; i++); " +
  "if (Deno.ppid !== parent) Deno.exit(0); }";

/** Busy processes beside the run, one per `AGENT_BUS_TEST_LOAD`. */
function startLoad(count: number): Deno.ChildProcess[] {
  const spinners = [];
  for (let i = 0; i < count; i++) {
    spinners.push(
      new Deno.Command(Deno.execPath(), {
        args: ["eval", SPIN],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn(),
    );
  }
  if (count > 0) {
    say(`== ${counted(count, "busy process", "busy processes")} running beside the suite`);
  }
  return spinners;
}

const load = startLoad(Number(Deno.env.get("AGENT_BUS_TEST_LOAD") ?? 0) || 0);
say("== deno test on SQLite (agents on the resident bus)");
let ok = await denoTest(["--ignore=tests/stress", "tests/"]);
say("== deno test on SQLite, every server in a process of its own (the tests that start servers)");
ok = await denoTest(await standaloneFiles(), { AGENT_BUS_STANDALONE: "1" }) && ok;

const bin = await postgresBin();
if ("unavailable" in bin) {
  say(`== PostgreSQL run skipped: ${bin.unavailable}`);
} else {
  say("== deno test on PostgreSQL (a throwaway cluster)");
  const pg = await startPostgres({ checkLocks: true });
  try {
    ok = await denoTest(await postgresFiles(), {
      AGENT_BUS_TEST_STORE: "postgres",
      AGENT_BUS_TEST_PG_URL: pg.url,
      AGENT_BUS_TEST_PG_BIN: `${bin.dir}/createdb`,
    }) && ok;
  } finally {
    await pg[Symbol.asyncDispose]();
  }
}
for (const spinner of load) {
  spinner.kill("SIGKILL");
  await spinner.status;
}
await Deno.remove(home.path, { recursive: true }).catch(() => {});
Deno.exit(ok ? 0 : 1);
