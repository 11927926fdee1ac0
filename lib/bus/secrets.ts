/**
 * Credentials never enter the bus: the one list of what a recognisable
 * secret looks like (cloud keys, GitHub/GitLab/Slack/npm tokens, AI API
 * keys, private key blocks, passwords in database URLs…), and the screen
 * every path that stores text runs it through (`AGENT_BUS_SECRETS`):
 * `block` (the default) refuses the text, naming the kind of secret and
 * where it is, never the secret itself; `redact` stores it with each secret
 * replaced by `[redacted <kind>]`; `allow` stores it as it is.
 *
 * Documented example keys (AWS's `AKIAIOSFODNN7EXAMPLE`) and obvious
 * placeholders (`ghp_xxxx…`, `AAAA…`, `ABCDEF…`, `sk-your-key-here`,
 * `postgres://user:password@…`) are not secrets: a conversation about
 * credentials stays possible.
 *
 * Hazard: this runs on every message, before its write transaction, on text
 * of any shape. Each detector is looked for only where its fixed hint
 * (`AKIA`, `ghp_`, `://`, …) occurs; every regex has bounded quantifiers and
 * no nested repetition, and URLs are read by a plain loop, so a scan is
 * linear in the text (a bounded amount of work per hint occurrence).
 *
 * @module
 */

import type { SecretsMode } from "../config.ts";
import { BusError, type ErrorCode } from "../errors.ts";

/** One kind of credential. */
interface Detector {
  /** Stable name, shown in errors and in `[redacted <kind>]`. */
  kind: string;
  /** How a person calls it. */
  label: string;
  /** Fixed strings one of which every match contains (the cheap test before the regex). */
  hints: readonly string[];
  /** Global; bounded quantifiers only. */
  pattern: RegExp;
  /** The part of a match that must not look like a placeholder (default: the whole match). */
  secretPart?: (match: RegExpExecArray) => string;
  /** The characters the secret runs on with after its match (default {@linkcode TOKEN_CHAR}). */
  tail?: RegExp;
}

/** Whether a character code is one of base64's (a comparison, not a regex, per character). */
function isBase64(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) ||
    code === 43 || code === 47 || code === 61;
}
/** Characters of a token: where a secret that runs on ends. */
const TOKEN_CHAR = /[A-Za-z0-9_\-+/=]/;

/** The detectors, most specific first (an Anthropic key before a generic `sk-` one). */
const DETECTORS: readonly Detector[] = [
  {
    kind: "aws-access-key",
    label: "AWS access key",
    hints: ["AKIA", "ASIA", "ABIA", "ACCA"],
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/g,
  },
  {
    kind: "aws-secret-key",
    label: "AWS secret access key",
    hints: ["ecret_access_key", "ecretAccessKey", "ECRET_ACCESS_KEY", "ecret-access-key"],
    pattern:
      /(?:secret_access_key|SecretAccessKey|SECRET_ACCESS_KEY|secret-access-key)["']?[ \t]{0,4}[:=][ \t]{0,4}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/g,
    secretPart: (m) => m[1]!,
  },
  {
    kind: "github-token",
    label: "GitHub token",
    hints: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})\b/g,
  },
  {
    kind: "gitlab-token",
    label: "GitLab token",
    hints: ["glpat-", "glptt-", "gldt-", "glrt-"],
    pattern: /\bgl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20}(?![A-Za-z0-9_-])/g,
  },
  {
    kind: "slack-token",
    label: "Slack token",
    hints: ["xox"],
    pattern: /\bxox[abposr]-[0-9A-Za-z]{6,20}-[0-9A-Za-z-]{8,120}/g,
  },
  {
    kind: "slack-webhook",
    label: "Slack webhook URL",
    hints: ["hooks.slack.com/"],
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/]{20,120}/g,
  },
  {
    kind: "npm-token",
    label: "npm token",
    hints: ["npm_"],
    pattern: /\bnpm_[A-Za-z0-9]{36}\b/g,
  },
  {
    kind: "anthropic-key",
    label: "Anthropic API key",
    hints: ["sk-ant-"],
    pattern: /\bsk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{60,120}/g,
  },
  {
    kind: "openai-key",
    label: "OpenAI API key",
    hints: ["T3BlbkFJ"],
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,100}T3BlbkFJ[A-Za-z0-9_-]{16,100}/g,
  },
  {
    kind: "google-api-key",
    label: "Google API key",
    hints: ["AIza"],
    pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
  },
  {
    kind: "stripe-key",
    label: "Stripe secret key",
    hints: ["sk_live_", "rk_live_"],
    pattern: /\b[sr]k_live_[0-9A-Za-z]{24,99}\b/g,
  },
  {
    kind: "jwt",
    label: "JSON Web Token",
    hints: ["eyJ"],
    pattern: /\beyJ[A-Za-z0-9_-]{8,100}\.eyJ[A-Za-z0-9_-]{8,100}/g,
    tail: /[A-Za-z0-9_\-.]/,
  },
];

/** A private key block's header (its base64 body decides whether it is one). */
const PRIVATE_KEY_HEADER = /-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
/** Schemes of database URLs whose password would be a credential. */
const DATABASE_SCHEMES = new Set([
  "postgres",
  "postgresql",
  "mysql",
  "mariadb",
  "mongodb",
  "mongodb+srv",
  "redis",
  "rediss",
  "amqp",
  "amqps",
  "mssql",
  "sqlserver",
  "clickhouse",
]);
/** Characters that end a URL's user-info in running text. */
const AUTHORITY_END = new Set([..."/?#\"'<>`\\ \t\r\n@"]);

/** Documented example keys: shown in providers' docs, never valid. */
const DOCUMENTED_EXAMPLES = new Set([
  "AKIAIOSFODNN7EXAMPLE",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "ASIAIOSFODNN7EXAMPLE",
]);
/** Words that make a value a placeholder (compared in lower case). */
const PLACEHOLDER_WORDS = [
  "example",
  "sample",
  "dummy",
  "placeholder",
  "your",
  "redacted",
  "changeme",
  "xxxx",
  "****",
  "....",
  "…",
  "<",
  "${",
  "{{",
];
/** Passwords of database URLs that are obviously not real ones. */
const PLACEHOLDER_PASSWORDS = new Set([
  "password",
  "passwd",
  "pass",
  "pwd",
  "secret",
  "pw",
  "p",
  "x",
  "postgres",
  "root",
  "admin",
  "test",
  "mypassword",
]);

/** A secret found in a text: what it is and where (character offsets). */
export interface FoundSecret {
  kind: string;
  label: string;
  start: number;
  end: number;
}

/**
 * Whether `value` is a documented example or an obvious placeholder: a word
 * like `example` or `xxxx`, one character repeated six times, or an
 * ascending run of eight (`ABCDEFGH`, `12345678`). Linear.
 */
export function isPlaceholder(value: string): boolean {
  if (DOCUMENTED_EXAMPLES.has(value)) return true;
  const lower = value.toLowerCase();
  if (PLACEHOLDER_WORDS.some((word) => lower.includes(word))) return true;
  let same = 1;
  let ascending = 1;
  for (let i = 1; i < value.length; i++) {
    const step = value.charCodeAt(i) - value.charCodeAt(i - 1);
    same = step === 0 ? same + 1 : 1;
    ascending = step === 1 ? ascending + 1 : 1;
    if (same >= 6 || ascending >= 8) return true;
  }
  return false;
}

/**
 * Every recognisable secret in `text`, in order, not overlapping. Linear in
 * the text.
 */
export function findSecrets(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  for (const detector of DETECTORS) {
    if (!detector.hints.some((hint) => text.includes(hint))) continue;
    const pattern = new RegExp(detector.pattern);
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const secret = detector.secretPart?.(match) ?? match[0];
      if (isPlaceholder(secret)) continue;
      // (A secret part ends its match: what comes before it, a label, is not the secret.)
      const start = match.index + match[0].length - secret.length;
      const end = tokenEnd(text, match.index + match[0].length, detector.tail);
      found.push({ kind: detector.kind, label: detector.label, start, end });
      pattern.lastIndex = end;
    }
  }
  if (text.includes("PRIVATE KEY")) found.push(...privateKeys(text));
  if (text.includes("://")) found.push(...databasePasswords(text));
  found.sort((a, b) => a.start - b.start);
  // (Two detectors may find the same place: keep the first of overlapping finds.)
  const kept: FoundSecret[] = [];
  for (const secret of found) {
    if (kept.length === 0 || secret.start >= kept.at(-1)!.end) kept.push(secret);
  }
  return kept;
}

/** Where a token that a detector recognised by its start really ends. */
function tokenEnd(text: string, from: number, tail = TOKEN_CHAR): number {
  let end = from;
  while (end < text.length && tail.test(text[end]!)) end++;
  return end;
}

/** Private key blocks: a header followed by base64 (not `...`), up to the matching footer. */
function privateKeys(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  const header = new RegExp(PRIVATE_KEY_HEADER);
  let footer = 0;
  for (let match = header.exec(text); match !== null; match = header.exec(text)) {
    const bodyStart = match.index + match[0].length;
    // A real key's body is base64: 40 characters of it in a row (line breaks, also written as
    // `\n` in JSON, between them) say it is one; `...` or `<your key>` say it is not.
    let run = 0;
    let i = bodyStart;
    const limit = Math.min(text.length, bodyStart + 256);
    while (i < limit && run < 40) {
      const char = text[i]!;
      if (char === "\\" && (text[i + 1] === "n" || text[i + 1] === "r")) {
        i += 2;
        continue;
      }
      if (char !== "\n" && char !== "\r") run = isBase64(text.charCodeAt(i)) ? run + 1 : 0;
      i++;
    }
    if (run < 40) continue;
    // (The next footer is looked for once per footer, not once per header: linear.)
    if (footer !== -1 && footer < bodyStart) footer = text.indexOf("-----END", bodyStart);
    const close = footer === -1 ? -1 : text.indexOf("-----", footer + 8);
    const end = close === -1 || close > footer + 64 ? tokenEnd(text, i) : close + 5;
    found.push({ kind: "private-key", label: "private key", start: match.index, end });
    header.lastIndex = end;
  }
  return found;
}

/**
 * Passwords of database URLs (`postgres://user:password@host`): the
 * password is the secret; a placeholder (`password`, `…`, `${PGPASSWORD}`)
 * is not. A plain loop over `://` occurrences, as `strings.ts` reads URLs.
 */
function databasePasswords(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  for (let at = text.indexOf("://"); at !== -1; at = text.indexOf("://", at + 3)) {
    let schemeStart = at;
    while (schemeStart > 0 && at - schemeStart < 16 && /[a-z+]/i.test(text[schemeStart - 1]!)) {
      schemeStart--;
    }
    if (!DATABASE_SCHEMES.has(text.slice(schemeStart, at).toLowerCase())) continue;
    const start = at + 3;
    let colon = -1;
    let end = start;
    while (end < text.length && end - start < 512 && !AUTHORITY_END.has(text[end]!)) {
      if (text[end] === ":" && colon === -1) colon = end;
      end++;
    }
    if (text[end] !== "@" || colon === -1 || colon + 1 === end) continue;
    const password = text.slice(colon + 1, end);
    if (PLACEHOLDER_PASSWORDS.has(password.toLowerCase()) || isPlaceholder(password)) continue;
    found.push({
      kind: "database-password",
      label: "password in a database URL",
      start: colon + 1,
      end,
    });
  }
  return found;
}

/** How a refused text is reported: the dialect's code, and the field it came in. */
export interface ScreenOptions {
  mode: SecretsMode;
  /** The argument, as the caller named it (`outbox[2].content_markdown`, `content`). */
  field: string;
  /** The dialect's error for a refused argument (default `INVALID_ARGUMENT`). */
  code?: ErrorCode;
}

/**
 * `text` as it may be stored: unchanged when it holds no secret (or the
 * mode is `allow`), with each secret replaced by `[redacted <kind>]` in
 * `redact` mode.
 *
 * @throws {BusError} in `block` mode, when it holds one: the options' code,
 *   naming the kind and the line and column where it starts, never the secret
 */
export function screenSecrets(text: string, options: ScreenOptions): string {
  if (options.mode === "allow") return text;
  const found = findSecrets(text);
  if (found.length === 0) return text;
  if (options.mode === "redact") return redacted(text, found);
  throw refusal(text, found[0]!, options);
}

/**
 * How the AgentChatBus dialect screens `field`: as its content filter does,
 * refusing with `ContentFilterError`.
 */
export function contentFilter(config: { secrets: SecretsMode }, field: string): ScreenOptions {
  return { mode: config.secrets, field, code: "ContentFilterError" };
}

/** {@linkcode screenSecrets} for a text that may be absent (a metadata object's JSON). */
export function screenOptional(text: string | null, options: ScreenOptions): string | null {
  return text === null ? null : screenSecrets(text, options);
}

/** `text` with each found secret replaced. */
function redacted(text: string, found: readonly FoundSecret[]): string {
  let out = "";
  let from = 0;
  for (const secret of found) {
    out += `${text.slice(from, secret.start)}[redacted ${secret.kind}]`;
    from = secret.end;
  }
  return out + text.slice(from);
}

function refusal(text: string, secret: FoundSecret, options: ScreenOptions): BusError {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < secret.start; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const column = secret.start - lineStart + 1;
  const where = `${options.field} at line ${line}, column ${column}`;
  const context = {
    field: options.field,
    secret_kind: secret.kind,
    line,
    column,
  };
  const code = options.code ?? "INVALID_ARGUMENT";
  if (code === "ContentFilterError") {
    return new BusError(code, `Content blocked: detected ${secret.label} in ${where}`, {
      context: { pattern: secret.label, ...context },
    });
  }
  return new BusError(
    code,
    `${where} holds ${article(secret.label)} ${secret.label} (${secret.kind}); nothing was ` +
      "stored. Leave the credential out (an administrator can set AGENT_BUS_SECRETS=redact to " +
      `store such messages with [redacted ${secret.kind}] in its place)`,
    { context },
  );
}

function article(label: string): string {
  return /^[aeiouAEIO]/.test(label) ? "an" : "a";
}
