/**
 * `agent-bus doctor`: is everything in place? The database file and its
 * directory, the schema and our migrations, SQLite's FTS5 and WAL (or, on
 * PostgreSQL, the connection, the schema and LISTEN/NOTIFY), the
 * embedding endpoint, every MCP client configured to start agent-bus, and
 * the hooks `install --hooks` wrote (each run once, with an empty input).
 * Each finding says how to fix it. Nothing is changed.
 *
 * @module
 */

import { counted, directoryOf } from "../../strings.ts";
import {
  inspectDatabaseFile,
  isPostgresUrl,
  type PostgresProbe,
  probePostgres,
  sessionSettings,
  sqliteFeatures,
} from "../../runtime.ts";
import { EmbeddingsClient } from "../../search/embeddings.ts";
import { redactUrl, urlScheme } from "../../config.ts";
import { PACKAGE_VERSION } from "../../version.ts";
import { type CliContext, type Command, defineCommand, UsageError } from "../command.ts";
import { bytes } from "../format.ts";
import { CLIENT_IDS, CLIENTS, launchOf, remoteOf, type Scope } from "../install/clients.ts";
import { readJsonConfig, readTomlConfig } from "../install/config_edit.ts";
import { codexHookStatus, untrusted } from "../install/codex_trust.ts";
import { hookClient, hooksPath, isOurHook } from "../install/hooks.ts";
import { launchOfHook, shellQuote } from "../install/launch.ts";
import { PROTOCOLS } from "../../transports/hook/protocols.ts";
import { placesOf } from "./install.ts";
import { residentAddress, statusAt, turnedAwayText } from "../../transports/resident/protocol.ts";
import { checkRemote } from "../install/remote_check.ts";
import { checkEntry, isAgentBus, unreachableSocket } from "../install/entry_check.ts";

const USAGE = `Usage: agent-bus doctor [--deep] [--json]

Check the database, SQLite, the embedding endpoint, the MCP clients configured to run
agent-bus and their hooks, and say how to fix what is wrong. Changes nothing.

  --deep   Also run SQLite's quick_check over the whole file
  --json   The findings as JSON`;

/** One finding. */
export interface Finding {
  check: string;
  status: "ok" | "warn" | "fail" | "info";
  detail: string;
  fix?: string;
}

/** The `doctor` command. */
export const doctorCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    deep: { type: "boolean" },
    json: { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length > 0) throw new UsageError("doctor takes no arguments");
    const findings = [
      ...(isPostgresUrl(ctx.config.dbPath)
        ? await checkPostgres(ctx)
        : checkDatabase(ctx, values.deep ?? false)),
      await checkEmbeddings(ctx),
      await checkResidentBus(ctx),
      ...await checkClients(ctx),
      ...await checkHooks(ctx),
    ];
    const failed = findings.filter((f) => f.status === "fail").length;
    const warned = findings.filter((f) => f.status === "warn").length;
    if (values.json) {
      ctx.print.json({ version: PACKAGE_VERSION, ok: failed === 0, findings });
      return failed ? 1 : 0;
    }
    const style = ctx.print.style();
    const mark = {
      ok: style.green("✔"),
      warn: style.yellow("⚠"),
      fail: style.red("✘"),
      info: style.dim("·"),
    };
    const width = Math.max(...findings.map((f) => f.check.length));
    ctx.print.out(`agent-bus doctor (${PACKAGE_VERSION})`);
    for (const f of findings) {
      ctx.print.out(`${mark[f.status]} ${f.check.padEnd(width)}  ${f.detail}`);
      if (f.fix) ctx.print.out(`  ${" ".repeat(width)}  ${style.dim("fix:")} ${f.fix}`);
    }
    ctx.print.out(`${counted(failed, "problem")}, ${counted(warned, "warning")}`);
    return failed ? 1 : 0;
  },
});

/** The resident bus of this database: whether one runs, its version and sessions. */
async function checkResidentBus(ctx: CliContext): Promise<Finding> {
  const check = "Resident bus";
  const address = residentAddress(ctx.config);
  if ("none" in address) return { check, status: "info", detail: `none: ${address.none}` };
  const answer = await statusAt(address.socket);
  if (!answer) {
    return {
      check,
      status: "info",
      detail: `not running (the next agent to start starts it; ${address.socket})`,
    };
  }
  if (!answer.ok) return { check, status: "warn", detail: answer.error };
  const { bus } = answer;
  const older = bus.version !== PACKAGE_VERSION;
  const turnedAway = turnedAwayText(bus);
  const fix = older
    ? "agent-bus bus stop (its sessions end; the next entry starts this version's bus)"
    : turnedAway
    ? "give every agent the same AGENT_BUS_* settings (the env of each client's config), or " +
      "agent-bus bus stop so that the next agent starts a bus with its own"
    : undefined;
  return {
    check,
    status: older || turnedAway ? "warn" : "ok",
    detail: `pid ${bus.pid}, agent-bus ${bus.version}, ${counted(bus.sessions, "session")}, ` +
      `since ${bus.started_at}` +
      (bus.url === null ? "" : `, serving ${bus.url} (${counted(bus.http_sessions, "session")})`) +
      (turnedAway === undefined ? "" : `; ${turnedAway}`),
    ...(fix ? { fix } : {}),
  };
}

/** The PostgreSQL store: reachable, our schema, and wake-ups through LISTEN/NOTIFY. */
async function checkPostgres(ctx: CliContext): Promise<Finding[]> {
  const url = redactUrl(ctx.config.dbPath);
  let probe;
  try {
    probe = await probePostgres(ctx.config.dbPath, {
      busyTimeoutMs: ctx.config.busyTimeoutMs,
      log: ctx.log,
    });
  } catch (error) {
    return [{
      check: "Database",
      status: "fail",
      detail: error instanceof Error ? error.message : String(error),
      fix: "start the server (systemctl start postgresql), check host, port, user and " +
        "database in AGENT_BUS_DB, and the password (PGPASSWORD or ~/.pgpass)",
    }];
  }
  const { migration } = probe;
  return [
    { check: "Database", status: "ok", detail: `${url} (PostgreSQL ${probe.version})` },
    {
      check: "Schema",
      status: "ok",
      detail: `agent-bus schema level ${migration.current} of ${migration.target}`,
    },
    probe.listenMs === undefined
      ? {
        check: "Wake-ups",
        status: "fail",
        detail: "a NOTIFY did not come back through LISTEN within 3 s",
        fix: "LISTEN/NOTIFY must reach the server directly: a pooler in transaction mode " +
          "(PgBouncer) drops them; connect agent-bus to PostgreSQL itself",
      }
      : {
        check: "Wake-ups",
        status: "ok",
        detail: `LISTEN/NOTIFY round trip ${probe.listenMs.toFixed(1)} ms`,
      },
    checkStallLimits(probe, ctx.config.busyTimeoutMs),
  ];
}

/**
 * The settings that free a vanished host's locks within seconds: each
 * connection asks for them at start-up; a pooler or a server that drops
 * start-up parameters (or a PostgreSQL older than 12) leaves them unset.
 */
function checkStallLimits(probe: PostgresProbe, busyTimeoutMs: number): Finding {
  const wanted = sessionSettings(busyTimeoutMs);
  const tcpOnly = (name: string) => name.startsWith("tcp_");
  const wrong = Object.entries(wanted)
    .filter(([name]) => probe.viaTcp || !tcpOnly(name))
    .filter(([name, value]) => probe.settings[name] !== value)
    .map(([name, value]) => `${name} is ${probe.settings[name] ?? "unknown"}, not ${value}`);
  if (wrong.length > 0) {
    return {
      check: "Stall limits",
      status: "warn",
      detail: `the server did not keep what agent-bus asks for: ${wrong.join("; ")}`,
      fix: "connect to PostgreSQL 12 or later directly (not through a pooler that drops start-up " +
        "parameters), or set them in postgresql.conf: idle_in_transaction_session_timeout = 4s, " +
        "tcp_user_timeout = 4s, tcp_keepalives_idle = 2, tcp_keepalives_interval = 1, " +
        "tcp_keepalives_count = 2",
    };
  }
  const s = probe.settings;
  return {
    check: "Stall limits",
    status: "ok",
    detail: `idle in transaction ${s.idle_in_transaction_session_timeout} ms, statement ` +
      `${s.statement_timeout} ms` +
      (probe.viaTcp
        ? `, tcp_user_timeout ${s.tcp_user_timeout} ms, keepalives ${s.tcp_keepalives_idle}+` +
          `${s.tcp_keepalives_interval}×${s.tcp_keepalives_count} s`
        : " (Unix socket: no TCP keepalives needed)"),
  };
}

function checkDatabase(ctx: CliContext, deep: boolean): Finding[] {
  const path = ctx.config.dbPath;
  if (path === ":memory:") {
    return [{
      check: "Database",
      status: "warn",
      detail:
        "AGENT_BUS_DB is :memory:: every process has its own empty bus, so agents cannot meet",
      fix: "unset AGENT_BUS_DB or point it at a file",
    }];
  }
  if (urlScheme(path) !== undefined) {
    return [{
      check: "Database",
      status: "fail",
      detail: `AGENT_BUS_DB is a ${urlScheme(path)}:// URL (${
        redactUrl(path)
      }); agent-bus stores a bus in a SQLite file or in PostgreSQL`,
      fix: "point AGENT_BUS_DB at a file path or a postgres:// URL",
    }];
  }
  const dir = directoryOf(path);
  const facts = inspectDatabaseFile(path, { deep });
  return [
    ...fileFindings(path, dir, facts),
    ...privacyFindings(dir, facts),
    ...schemaFindings(facts),
    ...integrityFindings(facts),
    ...sqliteFindings(facts),
  ];
}

/** What `doctor` learns from the database file. */
type DatabaseFacts = ReturnType<typeof inspectDatabaseFile>;

/** Whether the database file is there, and its directory writable (the WAL needs it). */
function fileFindings(path: string, dir: string, facts: DatabaseFacts): Finding[] {
  const findings: Finding[] = [];
  const writable = dirWritable(dir);
  if (!facts.exists) {
    findings.push({
      check: "Database",
      status: writable ? "info" : "fail",
      detail: `${path} does not exist yet${
        writable
          ? "; it is created on first use"
          : `, and ${
            writable === undefined
              ? "its directory is missing and cannot be created"
              : `${dir} is not writable`
          }`
      }`,
      fix: writable
        ? undefined
        : `make ${dir} writable by this user, or set AGENT_BUS_DB to a writable place`,
    });
  } else {
    findings.push({
      check: "Database",
      status: writable ? "ok" : "fail",
      detail: `${path} (${bytes(facts.bytes)}, WAL ${bytes(facts.walBytes)})${
        writable ? "" : `; ${dir} is not writable`
      }`,
      fix: writable ? undefined : `servers need to write ${dir} (for the WAL): fix its permissions`,
    });
  }
  return findings;
}

/** Files of the bus other users of the machine can read. */
function privacyFindings(dir: string, facts: DatabaseFacts): Finding[] {
  const findings: Finding[] = [];
  if (facts.exposed.length > 0) {
    findings.push({
      check: "Privacy",
      status: "warn",
      detail: `other users of this machine can read what agents said: ${
        facts.exposed.map((f) => `${f.path} is ${f.mode}`).join(", ")
      }`,
      fix: facts.exposed.map((f) =>
        `chmod ${f.path === dir ? "700" : "600"} ${shellQuote(f.path)}`
      ).join(" && ") + " (agent-bus also narrows its files to 600 whenever it opens them)",
    });
  }
  return findings;
}

/** Whether the file is ours, and how far its tables are migrated. */
function schemaFindings(facts: DatabaseFacts): Finding[] {
  const findings: Finding[] = [];
  if (facts.error) {
    findings.push({
      check: "Schema",
      status: "fail",
      detail: `cannot read the file: ${facts.error}`,
      fix:
        "if it is not an Agent Bus database, point AGENT_BUS_DB elsewhere or `agent-bus db wipe --yes`",
    });
  } else if (facts.migration?.kind === "mismatch") {
    findings.push({
      check: "Schema",
      status: "fail",
      detail: `not an Agent Bus v6 database: ${facts.migration.detail}`,
      fix: "`agent-bus db wipe --yes` (deletes it) or point AGENT_BUS_DB at another file",
    });
  } else if (facts.migration?.kind === "ours") {
    const { current, target, pending } = facts.migration;
    findings.push(
      pending.length === 0
        ? {
          check: "Schema",
          status: "ok",
          detail: `Agent Bus v6, our tables at level ${current} of ${target}`,
        }
        : {
          check: "Schema",
          status: "info",
          detail: `Agent Bus v6, our tables at level ${current}; ${
            counted(pending.length, "migration")
          } to apply`,
          fix: "`agent-bus db migrate` (or start any server: it migrates on open; data is kept)",
        },
    );
  }
  return findings;
}

/** SQLite's `quick_check` (`--deep`). */
function integrityFindings(facts: DatabaseFacts): Finding[] {
  const findings: Finding[] = [];
  if (facts.quickCheck !== undefined) {
    findings.push(
      facts.quickCheck === "ok" ? { check: "Integrity", status: "ok", detail: "quick_check ok" } : {
        check: "Integrity",
        status: "fail",
        detail: facts.quickCheck,
        fix: "restore from a backup; `agent-bus export` what is readable",
      },
    );
  }
  return findings;
}

/** SQLite's version, FTS5, and whether our file is in WAL mode. */
function sqliteFindings(facts: DatabaseFacts): Finding[] {
  const findings: Finding[] = [];
  const sqlite = sqliteFeatures();
  // Only our own databases must be in WAL mode; a foreign file is reported under Schema.
  const wal = facts.migration?.kind !== "ours" || facts.journalMode === "wal";
  findings.push({
    check: "SQLite",
    status: sqlite.fts5 && wal ? "ok" : "fail",
    detail: `${sqlite.version}, FTS5 ${sqlite.fts5 ? "available" : "MISSING"}` +
      (facts.journalMode ? `, journal mode ${facts.journalMode}` : ""),
    fix: !sqlite.fts5
      ? "this build lacks FTS5: use an official agent-bus binary or Deno 2.9"
      : !wal
      ? "another program switched the file out of WAL; start any agent-bus server to switch it back"
      : undefined,
  });
  return findings;
}

/** true: writable; false: exists but not writable; undefined: missing and cannot be created. */
function dirWritable(dir: string): boolean | undefined {
  try {
    Deno.statSync(dir);
  } catch {
    const parent = directoryOf(dir);
    return parent === dir ? undefined : dirWritable(parent) ? true : undefined;
  }
  const probe = `${dir}/.agent-bus-doctor-${Deno.pid}`;
  try {
    Deno.writeTextFileSync(probe, "");
    Deno.removeSync(probe);
    return true;
  } catch {
    return false;
  }
}

async function checkEmbeddings(ctx: CliContext): Promise<Finding> {
  const e = ctx.config.embeddings;
  const client = new EmbeddingsClient({
    url: e.url,
    api: e.api,
    apiKey: e.apiKey,
    timeoutMs: Math.min(e.timeoutMs, 3000),
    retryMs: 0,
  });
  try {
    const [vector] = await client.embed(["agent-bus doctor"], { model: e.model, kind: "query" });
    const api = client.status().api ?? e.api;
    return {
      check: "Embeddings",
      status: "ok",
      detail: `${e.url} (${api}) answers with ${
        vector!.length
      }-dimension vectors for ${e.model}: semantic search is on`,
    };
  } catch (error) {
    return {
      check: "Embeddings",
      status: "warn",
      detail: `${e.url} (${e.model}): ${
        error instanceof Error ? error.message : String(error)
      }. Search works, as full text only`,
      fix: e.url === "http://127.0.0.1:11434"
        ? `install Ollama and run \`ollama pull ${e.model}\`, or set AGENT_BUS_EMBEDDINGS_URL to an OpenAI-compatible server`
        : "start the endpoint, or fix AGENT_BUS_EMBEDDINGS_URL / AGENT_BUS_EMBEDDING_MODEL",
    };
  }
}

async function checkClients(ctx: CliContext): Promise<Finding[]> {
  const places = placesOf(ctx);
  const findings: Finding[] = [];
  const missing: string[] = [];
  for (const id of CLIENT_IDS) {
    const client = CLIENTS[id];
    let found = false;
    for (const scope of ["user", "project"] as Scope[]) {
      const path = client.path(scope, places);
      let text: string;
      try {
        text = await Deno.readTextFile(path);
      } catch {
        continue;
      }
      let config: Record<string, unknown>;
      try {
        config = client.format === "toml" ? readTomlConfig(path, text) : readJsonConfig(path, text);
      } catch (error) {
        findings.push({ check: client.title, status: "warn", detail: (error as Error).message });
        continue;
      }
      let servers: unknown = config;
      for (const key of client.serversKey) {
        servers = (servers as Record<string, unknown> | undefined)?.[key];
      }
      for (const [name, entry] of Object.entries((servers ?? {}) as Record<string, unknown>)) {
        const remote = remoteOf(client, entry);
        if (remote && /agent-bus/i.test(name)) {
          found = true;
          const where = `${scope}: "${name}"`;
          findings.push({ check: client.title, ...await checkRemote(ctx, id, where, remote) });
          continue;
        }
        const launch = launchOf(client, entry);
        if (!launch || !isAgentBus(name, launch.command, launch.args)) continue;
        found = true;
        findings.push(await checkEntry(ctx, `${client.title}`, `${scope}: "${name}"`, launch));
      }
    }
    if (!found) missing.push(id);
  }
  if (missing.length > 0) {
    findings.push({
      check: "Clients",
      status: "info",
      detail: `not configured: ${missing.join(", ")}`,
      fix: "`agent-bus install <client>` for each agent that should join",
    });
  }
  return findings;
}

/** The hooks `install --hooks` wrote: all of a client's events, the same database, and answering. */
async function checkHooks(ctx: CliContext): Promise<Finding[]> {
  const places = placesOf(ctx);
  const findings: Finding[] = [];
  for (const id of CLIENT_IDS) {
    const client = hookClient(id);
    if (!client) continue;
    const title = `Hooks (${CLIENTS[id].title})`;
    for (const scope of ["user", "project"] as Scope[]) {
      const path = hooksPath(client, scope, places);
      let settings: Record<string, unknown>;
      try {
        settings = readJsonConfig(path, await Deno.readTextFile(path));
      } catch {
        continue; // no file, or one the client check already reports
      }
      const hooks = (settings.hooks ?? {}) as Record<string, { hooks?: { command?: unknown }[] }[]>;
      const events = Object.values(PROTOCOLS[client].events);
      const ours = new Map<string, string>();
      for (const event of events) {
        const groups = Array.isArray(hooks[event]) ? hooks[event] : [];
        const found = groups.flatMap((g) => Array.isArray(g?.hooks) ? g.hooks : [])
          .find((h) => isOurHook(h?.command, client, event));
        if (found) ours.set(event, String(found.command));
      }
      if (ours.size === 0) continue;
      findings.push(await checkHookSet(ctx, { title, client: id, scope, path, events, ours }));
    }
  }
  return findings;
}

async function checkHookSet(
  ctx: CliContext,
  set: {
    title: string;
    client: string;
    scope: Scope;
    path: string;
    events: string[];
    ours: Map<string, string>;
  },
): Promise<Finding> {
  const where = `${set.scope} (${set.path})`;
  const again = `\`agent-bus install ${set.client} --hooks\` again${
    set.scope === "project" ? " --scope project" : ""
  }`;
  const missing = set.events.filter((event) => !set.ours.has(event));
  if (missing.length > 0) {
    return {
      check: set.title,
      status: "warn",
      detail: `${where}: no ${missing.join(", ")} hook`,
      fix: again,
    };
  }
  const stop = set.ours.get(set.events[0]!)!;
  // `--db` is the hook's last path argument before the options install may add.
  const db = / --db (\S+)/.exec(stop)?.[1]?.replace(/^'(.*)'$/, "$1");
  if (db !== undefined && db !== ctx.config.dbPath) {
    return {
      check: set.title,
      status: "warn",
      detail: `${where}: the hooks read ${redactUrl(db)}, not ${redactUrl(ctx.config.dbPath)}`,
      fix: again,
    };
  }
  const socket = unreachableSocket(ctx, launchOfHook(stop));
  if (socket !== undefined) {
    return {
      check: set.title,
      status: "warn",
      detail: `${where}: the hooks may not connect to the resident bus's socket ${socket}: ` +
        "they read the database themselves (slower)",
      fix: again,
    };
  }
  const wait = / --wait (\d+)/.exec(stop)?.[1];
  let shown = `${where}: ${set.events.join(", ")}${wait ? ` (on call, ${wait} s)` : ""}`;
  if (set.client === "codex") {
    const trust = await codexTrust(ctx, set, { where, again });
    if (typeof trust !== "string") return trust;
    shown += trust;
  }
  if (Deno.build.os === "windows") return { check: set.title, status: "ok", detail: shown };
  try {
    const ms = await timeStopHook(stop);
    return {
      check: set.title,
      status: "ok",
      detail: `${shown}; the stop hook answered in ${ms} ms`,
    };
  } catch (error) {
    return {
      check: set.title,
      status: "fail",
      detail: `${where}: the stop hook does not run: ${(error as Error).message.slice(0, 200)}`,
      fix: again,
    };
  }
}

/**
 * Whether Codex trusts our hooks (it runs no hook the user has not
 * trusted): a failing finding when it does not, else what to add to the
 * hooks' line.
 */
async function codexTrust(
  ctx: CliContext,
  set: { title: string; ours: Map<string, string> },
  { where, again }: { where: string; again: string },
): Promise<Finding | string> {
  const trust = await codexHookStatus({
    cwd: ctx.cwd,
    env: ctx.env,
    commands: [...set.ours.values()],
  });
  if (!trust.ok) return `; Codex's trust not checked: ${trust.reason}`;
  const left = untrusted(trust.hooks);
  if (left.length === 0 && trust.hooks.length >= set.ours.size) {
    return `; trusted by ${trust.version}`;
  }
  const names = left.length > 0 ? left.map((h) => h.event).join(", ") : "some of them";
  return {
    check: set.title,
    status: "fail",
    detail: `${where}: Codex does not trust ${names}, so it runs none of those hooks`,
    fix: `${again.replace(" --hooks", " --hooks --trust")}, or start \`codex\`, type /hooks ` +
      "and trust the agent-bus hooks",
  };
}

/**
 * Run the stop hook `command` as the client would, with an input that
 * matches no session: how long it took (ms).
 *
 * @throws {Error} when it fails or does not print JSON
 */
async function timeStopHook(command: string): Promise<number> {
  const started = performance.now();
  const child = new Deno.Command("sh", {
    args: ["-c", command.replace(/ --wait \d+/, "")],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("{}"));
  await writer.close();
  const output = await child.output();
  const ms = Math.round(performance.now() - started);
  JSON.parse(new TextDecoder().decode(output.stdout).trim());
  if (output.code !== 0) throw new Error(`exit code ${output.code}`);
  return ms;
}
