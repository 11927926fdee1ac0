/**
 * `agent-bus db …`: the database file itself: statistics, upkeep
 * (vacuum), our forward migrations, rebuilding the semantic index, and
 * wiping it.
 *
 * @module
 */

import { databaseCounts } from "../../bus/admin.ts";
import { readMigrationState, wipeDatabase } from "../../runtime.ts";
import {
  type CliContext,
  type Command,
  defineCommand,
  openCliRuntime,
  UsageError,
} from "../command.ts";
import { bytes } from "../format.ts";
import { startProgress } from "../progress.ts";

const USAGE = `Usage: agent-bus db <command> [options]

Commands:
  stats          File sizes, row counts, WAL size and search index backlog (--json)
  vacuum         Rebuild the file without free pages and empty the WAL
  migrate        Apply this version's migrations of our own tables (--dry-run: only
                 list them; --json). Data is kept: no upgrade of ours needs a wipe
  reindex        Embed every message not yet in the semantic index, now (needs the
                 embedding endpoint; see the README's Search section)
  wipe --yes     Delete the database file (AGENT_BUS_DB) and its -wal/-shm files.
                 Every topic and message is lost. Asks first unless --yes is given`;

/** The `db` command group. */
export const dbCommand: Command = defineCommand({
  summary: "Database statistics, vacuum, migrations, re-index and wipe",
  usage: USAGE,
  options: {
    yes: { type: "boolean", short: "y" },
    json: { type: "boolean" },
    "dry-run": { type: "boolean" },
  },
  async run({ values, positionals }, ctx) {
    if (positionals.length !== 1) throw new UsageError("db needs one command");
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
        throw new UsageError(`Unknown db command "${positionals[0]}"`);
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
  const path = ctx.config.dbPath;
  await using runtime = openCliRuntime(ctx);
  const { bus, search } = runtime;
  const counts = databaseCounts(bus);
  search.indexer.refreshCounts();
  const index = search.status();
  const files = {
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
  ctx.print.out([
    `Database  ${path}`,
    `Files     ${bytes(files.db_bytes)} + WAL ${
      bytes(files.wal_bytes)
    } (${s.page_count} pages of ${s.page_size} B, ` +
    `${s.freelist_count} free; journal ${s.journal_mode}; SQLite ${s.version})`,
    `Topics    ${counts.topics.open} open, ${counts.topics.closed} closed`,
    `Messages  ${counts.messages}`,
    `Questions ${counts.questions.pending} pending, ${counts.questions.answered} answered, ${counts.questions.cancelled} cancelled`,
    `Mail      ${counts.mail.unread} unread of ${counts.mail.total}`,
    `Search    ${counts.search_backlog} message(s) waiting for code-aware terms; semantic index ` +
    `(${index.model}): ${index.indexed} indexed, ${index.backlog} waiting, ${index.failed} failed; ` +
    `${counts.vectors.chunks} vector chunk(s) for ${counts.vectors.models} model(s)`,
  ].join("\n"));
  return 0;
}

async function vacuum(ctx: CliContext): Promise<number> {
  const path = ctx.config.dbPath;
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
  ctx.print.out(`Vacuumed ${path}: ${bytes(before)} → ${bytes(after)}`);
  return 0;
}

async function migrate(
  ctx: CliContext,
  options: { dryRun: boolean; json: boolean },
): Promise<number> {
  const path = ctx.config.dbPath;
  const before = readMigrationState(path);
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
  const after = options.dryRun ? before : readMigrationState(path);
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
    `${verb} ${pending.length} migration(s) to ${path}${before ? "" : " (a new database)"}:`,
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
      `Stopped with ${end.backlog} message(s) left: ${end.state}` +
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

function wipe(ctx: CliContext, yes: boolean): number {
  const path = ctx.config.dbPath;
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
  const removed = wipeDatabase(path);
  ctx.print.out(
    removed.length === 0
      ? `No database at "${path}"; nothing to wipe.`
      : `Wiped "${path}" (${removed.length} file(s) removed).`,
  );
  return 0;
}
