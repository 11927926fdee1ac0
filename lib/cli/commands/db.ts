/**
 * `agent-bus db …`: the database itself: statistics, upkeep (vacuum), our
 * forward migrations, copying a bus between stores, rebuilding the semantic
 * index, and wiping it. Each works on a SQLite file and on PostgreSQL.
 *
 * @module
 */

import { databaseCounts } from "../../bus/admin.ts";
import { importAgentChatBus } from "../../bus/chat/import.ts";
import { redactUrl } from "../../config.ts";
import { copyDatabase, isPostgresUrl, readMigrationState, wipeDatabase } from "../../runtime.ts";
import {
  type CliContext,
  type Command,
  defineCommand,
  openCliRuntime,
  subcommandError,
  UsageError,
} from "../command.ts";
import { bytes } from "../format.ts";
import { counted } from "../../strings.ts";
import { startProgress } from "../progress.ts";

/** The commands of `db`, as its usage lists them. */
const DB_COMMANDS = [
  "stats",
  "vacuum",
  "migrate",
  "reindex",
  "wipe",
  "copy",
  "import-agentchatbus",
];

const USAGE = `Usage: agent-bus db <command> [options]

Commands:
  stats          File sizes (or database size), row counts and search index backlog (--json)
  vacuum         Rebuild the file without free pages and empty the WAL (PostgreSQL: VACUUM)
  migrate        Apply this version's migrations of our own tables (--dry-run: only
                 list them; --json). Data is kept: no upgrade of ours needs a wipe
  reindex        Embed every message not yet in the semantic index, now (needs the
                 embedding endpoint; see the README's Search section)
  copy FROM TO   Copy a whole bus from one store to another (SQLite file or postgres://
                 URL, either way); TO must be empty. Progress on stderr, counts checked
  import-agentchatbus FILE
                 Bring an AgentChatBus database (its SQLite file) onto this bus: agents
                 (their tokens still work), custom templates, threads, messages, edits and
                 reactions. What the bus already has is kept; counts checked (--json)
  wipe --yes     Delete the database file (AGENT_BUS_DB) and its -wal/-shm/-lock files, or our
                 tables in PostgreSQL. Every topic and message is lost. Asks first
                 unless --yes is given`;

/** The `db` command group. */
export const dbCommand: Command = defineCommand({
  usage: USAGE,
  options: {
    yes: { type: "boolean", short: "y" },
    json: { type: "boolean" },
    "dry-run": { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals[0] === "import-agentchatbus") {
      if (positionals.length !== 2) throw new UsageError("db import-agentchatbus needs FILE");
      return await importCommand(ctx, positionals[1]!, values.json ?? false);
    }
    if (positionals[0] === "copy") {
      if (positionals.length !== 3) throw new UsageError("db copy needs FROM and TO");
      return await copyCommand(ctx, positionals[1]!, positionals[2]!);
    }
    if (positionals.length === 0) throw subcommandError("db", undefined, DB_COMMANDS);
    if (positionals.length > 1) throw new UsageError(`Unexpected "${positionals[1]}"`);
    switch (positionals[0]) {
      case "stats":
        return await stats(ctx, values.json ?? false);
      case "vacuum":
        return await vacuum(ctx);
      case "migrate":
        return await migrate(ctx, {
          dryRun: values["dry-run"] ?? false,
          json: values.json ?? false,
        });
      case "reindex":
        return await reindex(ctx);
      case "wipe":
        return wipe(ctx, values.yes ?? false);
      default:
        throw subcommandError("db", positionals[0], DB_COMMANDS);
    }
  },
});

function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

async function stats(ctx: CliContext, json: boolean): Promise<number> {
  const path = redactUrl(ctx.config.dbPath);
  await using runtime = openCliRuntime(ctx);
  const { bus, search } = runtime;
  const counts = databaseCounts(bus);
  search.indexer.refreshCounts();
  const index = search.status();
  const files = counts.postgres ? {} : {
    db_bytes: fileSize(path),
    wal_bytes: fileSize(`${path}-wal`),
    shm_bytes: fileSize(`${path}-shm`),
  };
  const result = {
    path,
    files,
    ...counts,
    semantic_index: {
      model: index.model,
      indexed: index.indexed,
      failed: index.failed,
      backlog: index.backlog,
    },
  };
  if (json) {
    ctx.print.json(result);
    return 0;
  }
  const s = counts.sqlite;
  const p = counts.postgres;
  ctx.print.out([
    `Database  ${path}`,
    s
      ? `Files     ${bytes(files.db_bytes ?? 0)} + WAL ${
        bytes(files.wal_bytes ?? 0)
      } (${s.page_count} ` +
        `pages of ${s.page_size} B, ${s.freelist_count} free; journal ${s.journal_mode}; SQLite ${s.version})`
      : `Size      ${bytes(p?.database_bytes ?? 0)} (PostgreSQL ${p?.version})`,
    `Topics    ${counts.topics.open} open, ${counts.topics.closed} closed`,
    `Messages  ${counts.messages}`,
    `Questions ${counts.questions.pending} pending, ${counts.questions.answered} answered, ${counts.questions.cancelled} cancelled`,
    `Mail      ${counts.mail.unread} unread of ${counts.mail.total}`,
    `Search    ${
      counted(counts.search_backlog, "message")
    } waiting for the full-text index; semantic index ` +
    `(${index.model}): ${index.indexed} indexed, ${index.backlog} waiting, ${index.failed} failed; ` +
    `${counted(counts.vectors.chunks, "vector chunk")} for ${
      counted(counts.vectors.models, "model")
    }`,
  ].join("\n"));
  return 0;
}

async function vacuum(ctx: CliContext): Promise<number> {
  const path = redactUrl(ctx.config.dbPath);
  const before = fileSize(path) + fileSize(`${path}-wal`);
  await using runtime = openCliRuntime(ctx);
  const { bus } = runtime;
  const progress = startProgress(ctx.io.stderr, "Vacuuming");
  try {
    bus.store.vacuum();
  } finally {
    progress.finish();
  }
  const after = fileSize(path) + fileSize(`${path}-wal`);
  ctx.print.out(
    isPostgresUrl(ctx.config.dbPath)
      ? `Vacuumed ${path}`
      : `Vacuumed ${path}: ${bytes(before)} → ${bytes(after)}`,
  );
  return 0;
}

async function migrate(
  ctx: CliContext,
  options: { dryRun: boolean; json: boolean },
): Promise<number> {
  const path = redactUrl(ctx.config.dbPath);
  const storeOptions = { busyTimeoutMs: ctx.config.busyTimeoutMs, log: ctx.log };
  const before = readMigrationState(ctx.config.dbPath, storeOptions);
  if (before?.kind === "mismatch") {
    ctx.print.err(
      `The database at ${path} is not ours to migrate (${before.detail}). ` +
        "Wipe it with `agent-bus db wipe --yes` or point AGENT_BUS_DB elsewhere.",
    );
    return 1;
  }
  const pending = before?.pending ?? [];
  if (!options.dryRun) {
    // Opening applies every pending migration in one transaction; a failed one leaves the store
    // failed with the reason, and nothing applied.
    await using runtime = openCliRuntime(ctx);
    const failure = runtime.store.check();
    if (failure) throw failure;
  }
  const after = options.dryRun ? before : readMigrationState(ctx.config.dbPath, storeOptions);
  if (options.json) {
    ctx.print.json({
      path,
      dry_run: options.dryRun,
      from: before?.current ?? 0,
      to: after?.current ?? 0,
      target: after?.target ?? before?.target,
      [options.dryRun ? "pending" : "applied"]: pending,
    });
    return 0;
  }
  if (pending.length === 0) {
    ctx.print.out(`${path} is up to date (level ${before?.current ?? after?.current ?? 0}).`);
    return 0;
  }
  const verb = options.dryRun ? "Would apply" : "Applied";
  ctx.print.out(
    `${verb} ${counted(pending.length, "migration")} to ${path}${
      before ? "" : " (a new database)"
    }:`,
  );
  for (const step of pending) ctx.print.out(`  ${step.version}. ${step.description}`);
  return 0;
}

async function reindex(ctx: CliContext): Promise<number> {
  await using runtime = openCliRuntime(ctx);
  const { search } = runtime;
  search.indexer.refreshCounts();
  const start = search.status();
  const progress = startProgress(ctx.io.stderr, `Indexing for ${start.model}`, start.backlog);
  try {
    while (await search.indexer.runOnce()) {
      search.indexer.refreshCounts();
      progress.update(start.backlog - search.status().backlog);
    }
  } finally {
    progress.finish();
  }
  search.indexer.refreshCounts();
  const end = search.status();
  if (end.backlog > 0 && end.state !== "idle") {
    ctx.print.err(
      `Stopped with ${counted(end.backlog, "message")} left: ${end.state}` +
        (end.endpoint.error ? ` (${end.endpoint.error})` : "") +
        `. The endpoint is ${end.endpoint.url}; see \`agent-bus doctor\`.`,
    );
    return 1;
  }
  ctx.print.out(
    `Semantic index (${end.model}): ${end.indexed} indexed, ${end.failed} failed, ${end.backlog} waiting.`,
  );
  return 0;
}

async function copyCommand(ctx: CliContext, from: string, to: string): Promise<number> {
  const [source, target] = [from, to].map((location) => resolveLocation(ctx, location));
  if (source === target) throw new UsageError("db copy needs two different databases");
  if (!isPostgresUrl(source!)) {
    try {
      await Deno.stat(source!);
    } catch {
      throw new UsageError(`No database at "${source}"`);
    }
  }
  let progress: ReturnType<typeof startProgress> | undefined;
  let tables;
  try {
    tables = await copyDatabase(source!, target!, {
      busyTimeoutMs: ctx.config.busyTimeoutMs,
      log: ctx.log,
      onProgress: (copied, total) => {
        progress ??= startProgress(ctx.io.stderr, "Copying", total);
        progress.update(copied);
      },
    });
  } finally {
    progress?.finish();
  }
  const rows = tables.reduce((sum, t) => sum + t.target, 0);
  const messages = tables.find((t) => t.table === "messages")?.target ?? 0;
  const topics = tables.find((t) => t.table === "topics")?.target ?? 0;
  ctx.print.out(
    `Copied ${redactUrl(source!)} → ${redactUrl(target!)}: ${counted(topics, "topic")}, ` +
      `${counted(messages, "message")}, ${counted(rows, "row")} in ${
        counted(tables.length, "table")
      }; every count matches.`,
  );
  return 0;
}

async function importCommand(ctx: CliContext, file: string, asJson: boolean): Promise<number> {
  const path = resolveLocation(ctx, file);
  try {
    await Deno.stat(path);
  } catch {
    throw new UsageError(`No file at "${path}"`);
  }
  await using runtime = openCliRuntime(ctx);
  let progress: ReturnType<typeof startProgress> | undefined;
  let report;
  try {
    report = await importAgentChatBus(runtime.bus, path, (done, total) => {
      if (asJson) return;
      progress ??= startProgress(ctx.io.stderr, "Importing", total);
      progress.update(done);
    });
  } finally {
    progress?.finish();
  }
  if (asJson) {
    ctx.print.out(JSON.stringify(report));
    return 0;
  }
  const line = (what: string, c: { found: number; imported: number; skipped: number }) =>
    `${what}: ${c.imported} imported of ${c.found}${
      c.skipped ? ` (${c.skipped} already here)` : ""
    }`;
  ctx.print.out(
    [
      `Imported ${path} into ${redactUrl(ctx.config.dbPath)}; every message of its ` +
      `${counted(report.threads.found, "thread")} is in the bus (counted again, thread by thread).`,
      line("threads", report.threads),
      line("messages", report.messages),
      line("agents", report.agents),
      line("templates", report.templates),
      `edits: ${report.edits}, reactions: ${report.reactions}`,
    ].join("\n"),
  );
  return 0;
}

/** A `db copy` argument: a URL as given, a path made absolute against the working directory. */
function resolveLocation(ctx: CliContext, location: string): string {
  if (location.startsWith("file://")) return new URL(location).pathname;
  if (location.includes("://") || location === ":memory:" || location.startsWith("/")) {
    return location;
  }
  return `${ctx.cwd}/${location}`;
}

function wipe(ctx: CliContext, yes: boolean): number {
  const path = redactUrl(ctx.config.dbPath);
  if (path === ":memory:") {
    ctx.print.out("The database is :memory:; there is nothing to wipe.");
    return 0;
  }
  if (!yes) {
    if (!ctx.io.stdin.isTerminal()) {
      throw new UsageError(`Refusing to wipe "${path}" without --yes`);
    }
    const answer = prompt(`Delete "${path}" and every message in it? Type "yes":`);
    if (answer?.trim().toLowerCase() !== "yes") {
      ctx.print.err("Nothing was deleted.");
      return 1;
    }
  }
  const removed = wipeDatabase(ctx.config.dbPath, {
    busyTimeoutMs: ctx.config.busyTimeoutMs,
    log: ctx.log,
  });
  const [what, done] = isPostgresUrl(ctx.config.dbPath)
    ? ["table", "dropped"]
    : ["file", "removed"];
  ctx.print.out(
    removed.length === 0
      ? `No database at "${path}"; nothing to wipe.`
      : `Wiped "${path}" (${counted(removed.length, what)} ${done}).`,
  );
  return 0;
}
