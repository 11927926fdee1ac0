/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temp dir, a
 * server on a free loopback port (and a socket in that dir), one database,
 * and everything removed afterwards. Nothing depends on a system-wide
 * server. PostgreSQL refuses to run as root, so as root the cluster runs
 * as the `postgres` user the Debian package creates.
 *
 * @module
 */

import { lockCheckStatements } from "../../lib/store/postgres/lock_checks.ts";
import { tmpDir } from "./tmp.ts";

/** A running cluster. */
export interface Postgres extends AsyncDisposable {
  /** `postgres://bus@127.0.0.1:PORT/bus` (trust authentication on loopback). */
  url: string;
  port: number;
  /** The server's log file. */
  logFile: string;
  /** Stop the server (`immediate`: as if it crashed) and keep the data. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Start it again on the same port and data. */
  start(): Promise<void>;
}

/** Where the server binaries are, or why there are none. */
export async function postgresBin(): Promise<{ dir: string } | { unavailable: string }> {
  const root = "/usr/lib/postgresql";
  try {
    const versions: number[] = [];
    for await (const entry of Deno.readDir(root)) {
      if (/^\d+$/.test(entry.name)) versions.push(Number(entry.name));
    }
    if (versions.length === 0) throw new Error("no version");
    return { dir: `${root}/${Math.max(...versions)}/bin` };
  } catch {
    return { unavailable: "PostgreSQL is not installed (apt-get install postgresql)" };
  }
}

/**
 * Start a fresh cluster with a database `bus` owned by the role `bus`.
 * Tests run it with `fsync=off` (a throwaway cluster need not survive a
 * power cut); `durable: true` keeps PostgreSQL's defaults, as the
 * benchmarks do, so every commit waits for its flush to disk.
 */
export async function startPostgres(
  options: {
    durable?: boolean;
    /**
     * Run the server in a network namespace (`ip netns exec …`), listening on
     * these addresses only and trusting `10.0.0.0/8`; `url` then uses the first.
     */
    netns?: { exec: string[]; listen: string[] };
    /** Listen on these addresses (default 127.0.0.1); `url` names the first, an IPv6 one in brackets. */
    listen?: string[];
    /**
     * Check every scoped write's locks in every database created (see
     * `lib/store/postgres/lock_checks.ts`): a write that touches what its
     * locks do not guard fails.
     */
    checkLocks?: boolean;
  } = {},
): Promise<Postgres> {
  const bin = await postgresBin();
  if ("unavailable" in bin) throw new Error(bin.unavailable);
  const dir = await tmpDir("agent-bus-pg-");
  const data = `${dir.path}/data`;
  const asRoot = Deno.uid() === 0;
  const owner = asRoot ? await userIds("postgres") : undefined;
  if (owner) await Deno.chown(dir.path, owner.uid, owner.gid);
  const run = async (program: string, args: string[]) => {
    const [plain, ...plainArgs] = owner
      ? ["runuser", "-u", "postgres", "--", `${bin.dir}/${program}`, ...args]
      : [`${bin.dir}/${program}`, ...args];
    const [command, ...argv] = [...(options.netns?.exec ?? []), plain!, ...plainArgs];
    const output = await new Deno.Command(command!, {
      args: argv,
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    if (!output.success) {
      throw new Error(`${program} failed: ${new TextDecoder().decode(output.stderr)}`);
    }
  };
  await run("initdb", ["-D", data, "-U", "bus", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const port = freePort();
  const listen = options.netns?.listen ?? options.listen ?? ["127.0.0.1"];
  if (options.netns) {
    await Deno.writeTextFile(`${data}/pg_hba.conf`, "host all all 10.0.0.0/8 trust\n", {
      append: true,
    });
  }
  const settings = `-p ${port} -k ${dir.path} -c listen_addresses=${listen.join(",")}` +
    (options.durable ? "" : " -c fsync=off");
  const start = () =>
    run("pg_ctl", ["-D", data, "-o", settings, "-l", `${dir.path}/server.log`, "-w", "start"]);
  const stop = (mode: "fast" | "immediate" = "fast") =>
    run("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]);
  await start();
  const local = ["-h", dir.path, "-p", String(port), "-U", "bus"];
  if (options.checkLocks) {
    const statements = lockCheckStatements().flatMap((statement) => ["-c", statement]);
    await run("psql", [...local, "-d", "template1", "-v", "ON_ERROR_STOP=1", "-q", ...statements]);
  }
  await run("createdb", [...local, "bus"]);
  let running = true;
  return {
    url: `postgres://bus@${listen[0]!.includes(":") ? `[${listen[0]}]` : listen[0]}:${port}/bus`,
    port,
    logFile: `${dir.path}/server.log`,
    async stop(mode) {
      await stop(mode);
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async [Symbol.asyncDispose]() {
      if (running) await stop("immediate").catch(() => {});
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** A loopback port nobody listens on right now. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const passwd = await Deno.readTextFile("/etc/passwd");
  const line = passwd.split("\n").find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`No user ${name}: install Debian's postgresql package`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Register a test that runs on a throwaway cluster of its own; where Debian's
 * PostgreSQL is not installed it is skipped, its name saying why.
 */
export async function clusterTest(
  name: string,
  fn: (pg: Postgres) => Promise<void>,
  options: { checkLocks?: boolean } = {},
): Promise<void> {
  const bin = await postgresBin();
  const ignore = "unavailable" in bin;
  Deno.test(
    { name: `${name}${ignore ? ` (skipped: ${bin.unavailable})` : ""}`, ignore },
    async () => {
      await using pg = await startPostgres(options);
      await fn(pg);
    },
  );
}
