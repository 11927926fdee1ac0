/**
 * String helpers for text that comes from outside (headers, URLs, config,
 * secrets).
 *
 * Hazard: `/\/+$/` and its kin look harmless but backtrack quadratically on
 * a long run of the repeated character followed by anything else (48 KiB of
 * slashes in an `Origin` header took seconds). These are plain loops.
 *
 * @module
 */

/** `text` without the `/` characters it ends with. Linear. */
export function trimTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** The directory part of a file path (`/` for a file in the root), either separator. */
export function directoryOf(path: string): string {
  return path.replace(/[\\/][^\\/]*$/, "") || "/";
}

/**
 * Compare two secrets (tokens) in time that depends only on their lengths,
 * never on where they differ. Linear in the longer one.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** Characters that end a URL's authority (`user:password@host:port`) in running text. */
const AUTHORITY_END = new Set([..."/?#\"'<>`\\ \t\r\n"]);

/**
 * `text` with every secret a URL can carry replaced by `***`: the password of
 * `scheme://user:password@host` and the value of a `password=` query
 * parameter, wherever they appear in running text (a log line, an error, a
 * command's output). The one redaction function: `redactUrl`, the logger and
 * the CLI's error output all call it. Linear: each character is looked at a
 * bounded number of times.
 */
export function redactSecrets(text: string): string {
  let out = "";
  let from = 0;
  let at = text.indexOf("://");
  while (at !== -1) {
    const start = at + 3;
    let end = start;
    let lastAt = -1;
    let firstColon = -1;
    while (end < text.length && !AUTHORITY_END.has(text[end]!)) {
      if (text[end] === "@") lastAt = end;
      else if (text[end] === ":" && firstColon === -1) firstColon = end;
      end++;
    }
    if (lastAt !== -1 && firstColon !== -1 && firstColon < lastAt) {
      out += `${text.slice(from, firstColon + 1)}***`;
      from = lastAt;
    }
    at = text.indexOf("://", Math.max(end, start));
  }
  return redactPasswordParams(out + text.slice(from));
}

/** `password=value` (any case, after `?`, `&`, `;` or a space) with the value replaced. */
function redactPasswordParams(text: string): string {
  const lower = text.toLowerCase();
  let out = "";
  let from = 0;
  for (let at = lower.indexOf("password="); at !== -1; at = lower.indexOf("password=", at + 9)) {
    const before = at === 0 ? " " : text[at - 1]!;
    if (!"?&; \t".includes(before)) continue;
    let end = at + 9;
    while (end < text.length && !"&; \t\r\n\"'".includes(text[end]!)) end++;
    if (end === at + 9) continue;
    out += `${text.slice(from, at + 9)}***`;
    from = end;
  }
  return out + text.slice(from);
}

/** 64-bit FNV-1a of `text`, as 16 hex digits (a name, not a secret). */
export function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, "0");
}

/** `n` and what it counts: "1 session", "3 sessions", "2 reserved names". */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
