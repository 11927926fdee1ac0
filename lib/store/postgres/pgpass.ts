/**
 * The password for a PostgreSQL URL from `~/.pgpass` (or `PGPASSFILE`), as
 * libpq finds it: the first line `host:port:database:user:password` whose
 * fields match (`*` matches anything; `\:` and `\\` are escapes). Used only
 * when neither the URL nor `PGPASSWORD` has a password. Like libpq, a file
 * that others can read is ignored.
 *
 * Input bounds: the file is read once and split into lines and fields in
 * one forward scan per line.
 *
 * @module
 */

/** Largest `.pgpass` read. */
const MAX_BYTES = 1 << 20;

/** The password `.pgpass` holds for `url`, or undefined. */
export function pgpassPassword(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.password || Deno.env.get("PGPASSWORD")) return undefined;
  const file = Deno.env.get("PGPASSFILE") ??
    `${Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? "."}/.pgpass`;
  let text: string;
  try {
    const info = Deno.statSync(file);
    if (!info.isFile || info.size > MAX_BYTES) return undefined;
    if (info.mode !== null && (info.mode & 0o077) !== 0) return undefined;
    text = Deno.readTextFileSync(file);
  } catch {
    return undefined;
  }
  const want = [
    decodeURIComponent(parsed.hostname) || Deno.env.get("PGHOST") || "localhost",
    parsed.port || Deno.env.get("PGPORT") || "5432",
    decodeURIComponent(parsed.pathname.slice(1)) || Deno.env.get("PGDATABASE") || "",
    decodeURIComponent(parsed.username) || Deno.env.get("PGUSER") || Deno.env.get("USER") || "",
  ];
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const fields = splitFields(line.replace(/\r$/, ""));
    if (fields.length < 5) continue;
    if (want.every((value, i) => fields[i] === "*" || fields[i] === value)) {
      return fields.slice(4).join(":");
    }
  }
  return undefined;
}

function splitFields(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\\" && i + 1 < line.length) {
      field += line[++i];
    } else if (c === ":" && fields.length < 4) {
      fields.push(field);
      field = "";
    } else {
      field += c;
    }
  }
  fields.push(field);
  return fields;
}
