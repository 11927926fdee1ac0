/**
 * A small fleet of "hosts" on one machine: Linux network namespaces joined
 * by veth pairs, for tests of behaviour that spans machines.
 *
 * The database host (`db`) has one link per client host; client host `i`
 * (1-based) reaches the database at `10.77.i.1` and is `10.77.i.2` itself, so
 * every host reaches PostgreSQL by IP only and shares no file with the
 * others. A host's link can be taken down and brought back. Everything is
 * deleted on dispose. Needs root and `ip netns`; {@linkcode netnsUnavailable}
 * says why not when they are missing, for the test's skip message.
 *
 * @module
 */

/** One client host of a fleet. */
export interface Host {
  /** The namespace's name (for `ip netns exec`). */
  ns: string;
  /** This host's address. */
  ip: string;
  /** The database host's address as this host reaches it. */
  dbIp: string;
  /** `ip netns exec <ns>`: prefix a command with it to run it on this host. */
  exec: string[];
}

/** The namespaces of one test. */
export interface Fleet extends AsyncDisposable {
  /** The database host. */
  db: { ns: string; exec: string[] };
  hosts: Host[];
  /** Take a host's link down (both ends), as a pulled cable does: nothing is closed. */
  linkDown(host: Host): Promise<void>;
  /** Bring a host's link up again. */
  linkUp(host: Host): Promise<void>;
}

let counter = 0;

/** Why namespaces cannot be made here, or undefined when they can. */
export async function netnsUnavailable(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return "network namespaces are Linux only";
  if (Deno.uid() !== 0) return "network namespaces need root (CI runs as root)";
  const probe = `abus-probe-${Deno.pid}`;
  try {
    await ip(["netns", "add", probe]);
    await ip(["netns", "del", probe]);
    return undefined;
  } catch (error) {
    return `ip netns is unavailable: ${error instanceof Error ? error.message : error}`;
  }
}

/** Make a database host and `count` client hosts, each linked to the database host. */
export async function startFleet(count: number): Promise<Fleet> {
  const tag = `${Deno.pid}-${++counter}`;
  const db = `abus-${tag}-db`;
  const made: string[] = [];
  const hosts: Host[] = [];
  try {
    await ip(["netns", "add", db]);
    made.push(db);
    await ip(["-n", db, "link", "set", "lo", "up"]);
    for (let i = 1; i <= count; i++) {
      const ns = `abus-${tag}-h${i}`;
      await ip(["netns", "add", ns]);
      made.push(ns);
      await ip(["-n", ns, "link", "set", "lo", "up"]);
      await ip([
        "link",
        "add",
        `d${i}`,
        "netns",
        db,
        "type",
        "veth",
        "peer",
        "name",
        "e0",
        "netns",
        ns,
      ]);
      await ip(["-n", db, "addr", "add", `10.77.${i}.1/24`, "dev", `d${i}`]);
      await ip(["-n", ns, "addr", "add", `10.77.${i}.2/24`, "dev", "e0"]);
      await ip(["-n", db, "link", "set", `d${i}`, "up"]);
      await ip(["-n", ns, "link", "set", "e0", "up"]);
      hosts.push({
        ns,
        ip: `10.77.${i}.2`,
        dbIp: `10.77.${i}.1`,
        exec: ["ip", "netns", "exec", ns],
      });
    }
  } catch (error) {
    for (const ns of made) await ip(["netns", "del", ns]).catch(() => {});
    throw error;
  }
  const index = (host: Host) => hosts.indexOf(host) + 1;
  const setLink = async (host: Host, state: "up" | "down") => {
    await ip(["-n", host.ns, "link", "set", "e0", state]);
    await ip(["-n", db, "link", "set", `d${index(host)}`, state]);
  };
  return {
    db: { ns: db, exec: ["ip", "netns", "exec", db] },
    hosts,
    linkDown: (host) => setLink(host, "down"),
    async linkUp(host) {
      await setLink(host, "up");
      // Addresses stay; the connected routes come back with the link.
    },
    async [Symbol.asyncDispose]() {
      for (const ns of made.reverse()) await ip(["netns", "del", ns]).catch(() => {});
    },
  };
}

async function ip(args: string[]): Promise<void> {
  const output = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  if (!output.success) {
    throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(output.stderr).trim()}`);
  }
}
