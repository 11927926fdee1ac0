/**
 * How `install` and `uninstall` change a client's files: the edits of each
 * file applied in turn to its text, the original backed up beside it, the
 * new text written whole (a temporary file, then a rename), its
 * permissions kept, or narrowed to its owner when it will hold a secret.
 * A dry run computes the same and writes nothing.
 *
 * @module
 */

import type { Edited } from "./config_edit.ts";

async function readText(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Back up `path` (if it exists), then replace it with `text`, keeping its
 * permissions, less those of group and others when it holds a `secret`.
 */
async function writeWithBackup(
  path: string,
  text: string,
  existed: boolean,
  secret: boolean,
): Promise<string | undefined> {
  const dir = path.replace(/[\\/][^\\/]*$/, "");
  if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  let backup: string | undefined;
  let mode: number | undefined;
  if (existed) {
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    backup = `${path}.agent-bus-backup-${stamp}`;
    for (let n = 2; await exists(backup); n++) backup = `${path}.agent-bus-backup-${stamp}-${n}`;
    await Deno.copyFile(path, backup);
    mode = (await Deno.stat(path)).mode ?? undefined;
  }
  if (secret) mode = (mode ?? 0o600) & 0o700;
  const temp = `${path}.tmp-agent-bus-${Deno.pid}`;
  await Deno.writeTextFile(temp, text, mode === undefined ? {} : { mode: mode & 0o777 });
  await Deno.rename(temp, path);
  return backup;
}

/** The edits of one file: applied in turn to its text, written once. */
export interface FileChange {
  path: string;
  edits: ((text: string) => Edited)[];
  /** The file will hold a secret (a bus's token): only its owner may read it. */
  secret?: boolean;
}

/** A file's outcome. */
export interface FileResult {
  path: string;
  changed: boolean;
  backup: string | undefined;
}

/** Apply the edits of each file (backed up first), or only compute them on a dry run. */
export async function applyFiles(changes: FileChange[], dryRun: boolean): Promise<FileResult[]> {
  const byPath = new Map<string, FileChange["edits"]>();
  const secret = new Set<string>();
  for (const change of changes) {
    byPath.set(change.path, [...(byPath.get(change.path) ?? []), ...change.edits]);
    if (change.secret) secret.add(change.path);
  }
  const results: FileResult[] = [];
  for (const [path, edits] of byPath) {
    const before = await readText(path);
    let text = before ?? "";
    let changed = false;
    for (const edit of edits) {
      const edited = edit(text);
      text = edited.text;
      changed ||= edited.changed;
    }
    const backup = changed && !dryRun
      ? await writeWithBackup(path, text, before !== undefined, secret.has(path))
      : undefined;
    results.push({ path, changed, backup });
  }
  return results;
}
