/**
 * `deno task test`: the suite on both stores.
 *
 * First every test on SQLite files: those that start no process, then the
 * others, the servers they start attached to a resident bus (the default).
 * Then the tests that start servers again, each server in a process of its
 * own (`AGENT_BUS_STANDALONE=1`). Then, where Debian's PostgreSQL is
 * installed, a throwaway cluster (`tests/_helpers/postgres.ts`) and the
 * store-independent suites again with `AGENT_BUS_TEST_STORE=postgres`: every
 * profile's contract, the transports, the console, the CLI and search, each
 * test on a database of its own. Without PostgreSQL that run is skipped with
 * a message saying so.
 * Exits non-zero when any run fails.
 *
 * Every run has a home of its own (`HOME`, removed at the end), so that
 * nothing the tests start reaches the user's `~/.agent_bus`: the default
 * database, the socket and lock of a PostgreSQL database's resident bus,
 * the hook record. The caches the tests use stay where they are, named
 * explicitly: Deno's (`DENO_DIR`), the real clients' (`XDG_CACHE_HOME`)
 * and npm's (`npm_config_cache`).
 *
 * Arguments are passed to every `deno test` run (e.g. `--filter sync`).
 * `--fast` (`deno task test:fast`) runs only the tests that start no
 * process, in about a minute: the loop to run while working.
 *
 * `AGENT_BUS_TEST_LOAD=<n>` keeps n busy processes (one spinning loop each)
 * running beside every run, as a busy machine would: the suite asserts
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
/**
 * What it names when it starts any other process: the CLI, a hook, a raw
 * server, a process holding a lock, a cluster, hosts, a browser, a client
 * (`tests/_helpers/`; a method of the same name, `.run(`, is not one).
 */
const STARTS_OTHERS = new RegExp(
  "(?<![.\\w])(?:rawServer|cli|spawnCli|cliProcess|run|spawnHook|runHook|spawnSteered|" +
    "startNodeSessions|holdWriteLock|execSql|readRows|startPostgres|clusterTest|startFleet|" +
    "fleetWithPostgres|peerOn|busStatus|killsUnderTraffic|installClients)\\(|" +
    "\\bDeno\\.Command\\b|\\bchromium\\b",
);

/** A test file of the SQLite runs, and what it starts. */
interface TestFile {
  path: string;
  startsServers: boolean;
  startsProcesses: boolean;
}

/** Every test file of the SQLite runs (the reliability suite has a task of its own). */
async function sqliteFiles(): Promise<TestFile[]> {
  const files: TestFile[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory && !["stress", "_helpers", "fixtures"].includes(entry.name)) {
        await walk(path);
      } else if (entry.isFile && path.endsWith("_test.ts")) {
        const text = await Deno.readTextFile(path);
        const startsServers = STARTS_SERVERS.test(text);
        files.push({
          path,
          startsServers,
          startsProcesses: startsServers || STARTS_OTHERS.test(text),
        });
      }
    }
  };
  await walk("tests");
  return files.sort((a, b) => a.path < b.path ? -1 : 1);
}

/** Whether `file` runs again with every server in a process of its own. */
function runsStandalone(file: TestFile): boolean {
  return file.startsServers && !file.path.startsWith("tests/clients/") &&
    !file.path.split("/").at(-1)!.startsWith("postgres_");
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
const fast = Deno.args.includes("--fast");
const extra = Deno.args.filter((arg) => arg !== "--fast");

/** `deno test` of `files` (none: nothing to run, where `deno test` would run every file). */
async function denoTest(files: string[], env: Record<string, string> = {}): Promise<boolean> {
  if (files.length === 0) return true;
  const child = new Deno.Command(Deno.execPath(), {
    args: [...base, ...extra, ...files],
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

/** The tests that start no process. */
function runInProcess(files: TestFile[]): Promise<boolean> {
  say("== deno test on SQLite, the tests that start no process");
  return denoTest(files.filter((file) => !file.startsProcesses).map((file) => file.path));
}

/** The tests that start processes, then again standalone, then the PostgreSQL run. */
async function runTheOthers(files: TestFile[]): Promise<boolean> {
  say("== deno test on SQLite, the tests that start processes (agents on the resident bus)");
  let ok = await denoTest(files.filter((file) => file.startsProcesses).map((file) => file.path));
  say(
    "== deno test on SQLite, every server in a process of its own (the tests that start servers)",
  );
  const standalone = files.filter(runsStandalone).map((file) => file.path);
  ok = await denoTest(standalone, { AGENT_BUS_STANDALONE: "1" }) && ok;
  return await runOnPostgres() && ok;
}

async function runOnPostgres(): Promise<boolean> {
  const bin = await postgresBin();
  if ("unavailable" in bin) {
    say(`== PostgreSQL run skipped: ${bin.unavailable}`);
    return true;
  }
  say("== deno test on PostgreSQL (a throwaway cluster)");
  const pg = await startPostgres({ checkLocks: true });
  try {
    return await denoTest(await postgresFiles(), {
      AGENT_BUS_TEST_STORE: "postgres",
      AGENT_BUS_TEST_PG_URL: pg.url,
      AGENT_BUS_TEST_PG_BIN: `${bin.dir}/createdb`,
    });
  } finally {
    await pg[Symbol.asyncDispose]();
  }
}

const load = startLoad(Number(Deno.env.get("AGENT_BUS_TEST_LOAD") ?? 0) || 0);
const files = await sqliteFiles();
let ok = await runInProcess(files);
if (!fast) ok = await runTheOthers(files) && ok;
for (const spinner of load) {
  spinner.kill("SIGKILL");
  await spinner.status;
}
await Deno.remove(home.path, { recursive: true }).catch(() => {});
Deno.exit(ok ? 0 : 1);
