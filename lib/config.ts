/**
 * Configuration, read in one place.
 *
 * `loadConfig(env)` turns the raw environment into a `ResolvedConfig` with
 * every field set. A bad value never stops the program: it becomes a warning
 * (printed at start) and the default is used, so a typo in an MCP client's
 * config cannot take the bus down. No other module reads `Deno.env`.
 *
 * @module
 */

import { redactSecrets, trimTrailingSlashes } from "./strings.ts";

/** Every setting the program uses, with defaults applied. */
export interface ResolvedConfig {
  /** Absolute path of the SQLite file, or `:memory:`. */
  dbPath: string;
  /** Most outbox items one `sync` may carry. */
  maxOutbox: number;
  /** Most characters in one message body. */
  maxMessageChars: number;
  /** Cap (and schema maximum) of `sync.max_items`. */
  maxSyncItems: number;
  /**
   * Budget of one tool result that lists messages, in UTF-8 bytes of its
   * structuredContent (and about as much text); see `lib/budget.ts`.
   */
  toolResultMaxBytes: number;
  /** Whether tool text shows whole bodies (true) or 80-character previews. */
  toolTextIncludeBodies: boolean;
  /** Longest a `sync` may wait; larger `wait_seconds` are capped with a warning. */
  maxWaitSeconds: number;
  /** How often a waiting call sends a progress notification (to clients that ask). */
  progressSeconds: number;
  /** Most characters of JSON in one `metadata` object. */
  maxMetadataChars: number;
  /** Largest image attached to a chatbus message, in bytes (decoded); at most 4 per message. */
  maxAttachmentBytes: number;
  /** How long a write waits for the database lock before `DB_BUSY`. */
  busyTimeoutMs: number;
  /** Lowest level written to stderr. */
  logLevel: LogLevel;
  /** NO_COLOR is set: the CLI prints no colours even on a terminal. */
  noColor: boolean;
  /** Semantic search: where and how to get embeddings. */
  embeddings: EmbeddingsConfig;
  /** Most unread messages one agent's mailbox may hold. */
  maxMailboxDepth: number;
  /** How long a running peer's registration lives without a refresh. */
  peerLeaseSeconds: number;
  /** The peer name of a `peerbus` server (AGENT_BUS_AGENT; `--agent` wins). */
  agent: string | undefined;
  /** `dotted` tool names (`bus.send`) or `underscore` ones (`bus_send`). */
  toolNames: "dotted" | "underscore";
  /** The HTTP server's settings. */
  http: HttpConfig;
  /** The role of a teacher/student server (MCP_ROLE, lowercased; `--role` wins). */
  role: string | undefined;
  /** Hard size limits of the teacher/student tools (seed 001, section 8.2). */
  qa: QaLimits;
  /** What happens to a message that holds a credential (`lib/bus/secrets.ts`). */
  secrets: SecretsMode;
  /** Where a stdio server runs (`lib/transports/resident/`). */
  resident: ResidentConfig;
}

/** Whether an MCP client's entry attaches to the host's resident bus. */
export interface ResidentConfig {
  /**
   * Attach to the resident bus: the default (where there can be one: a
   * SQLite file). AGENT_BUS_STANDALONE=1 (or `--standalone`, or
   * AGENT_BUS_RESIDENT=0) serves in the entry's own process.
   */
  attach: boolean;
  /** A resident bus with no session for this long ends by itself. */
  idleMs: number;
  /**
   * Session workers of a resident bus on PostgreSQL: its sessions are spread
   * over this many threads, each with its own connections, whatever the
   * number of agents (SQLite serves them in one).
   */
  workers: number;
  /** The user's home (HOME): a database URL's bus lives in its `~/.agent_bus`. */
  home: string | undefined;
  /**
   * The loopback port the bus serves MCP clients by URL on, once asked to
   * (`agent-bus bus start`; `install --url` writes it in the URL).
   */
  port: number;
}

/**
 * `AGENT_BUS_SECRETS`: `block` refuses a message that holds a credential,
 * `redact` stores it with the credential replaced, `allow` stores it as it is.
 */
export type SecretsMode = "block" | "redact" | "allow";

/** Hard size limits of the teacher/student tools; beyond them a call fails with INVALID_ARGUMENT. */
export interface QaLimits {
  maxQuestionChars: number;
  maxAnswerChars: number;
  maxTeacherNotesChars: number;
  /** Most `responses` in one `teacher_publish`. */
  maxPublishBatch: number;
}

/** Settings of `agent-bus http`. */
export interface HttpConfig {
  /** Address `agent-bus http` binds unless `--host` says (unset: 127.0.0.1). */
  host: string | undefined;
  /** Port `agent-bus http` listens on unless `--port` says. */
  port: number;
  /** Bearer token; required when the server binds a non-loopback address. */
  token: string | undefined;
  /** Extra `Host` header values to accept (besides loopback names and the bound host). */
  allowedHosts: string[];
  /** Extra `Origin` values to accept (besides loopback origins). */
  allowedOrigins: string[];
  /** MCP sessions unused this long are closed. */
  sessionIdleSeconds: number;
  /** How often an idle event stream (`/api/events`) sends a keep-alive comment. */
  keepAliveSeconds: number;
  /**
   * Answer POSTs with plain JSON instead of an SSE stream. Unset: mailbox
   * routes answer with JSON (as seed 003 does), `/mcp` with SSE (progress
   * notifications while `sync` waits).
   */
  jsonResponse: boolean | undefined;
  /**
   * Session workers of a node on PostgreSQL: its MCP sessions and REST calls
   * are spread over this many threads, each with its own connections, so a
   * call stalled on the database holds only its own thread's sessions.
   */
  workers: number;
}

/** Wire formats of embedding endpoints. */
export type EmbeddingsApi = "auto" | "ollama" | "openai";

/** Settings of the optional embedding endpoint and the semantic index. */
export interface EmbeddingsConfig {
  /** Base URL (Ollama's by default). */
  url: string;
  api: EmbeddingsApi;
  model: string;
  apiKey: string | undefined;
  /** Build vectors for new and old messages in the background. */
  autoindex: boolean;
  /** Longest wait for one embedding request. */
  timeoutMs: number;
  /** How long an endpoint that did not answer is left alone before the next try. */
  retrySeconds: number;
  /** Characters per chunk of a long message, and overlap between chunks. */
  chunkChars: number;
  chunkOverlap: number;
  /** Lowest cosine similarity a semantic hit may have (besides beating the reference texts). */
  minScore: number;
}

/** Levels of `lib/log.ts`, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** A setting that was present but unusable, and what was used instead. */
export interface ConfigWarning {
  variable: string;
  value: string;
  message: string;
}

/** Environment variables, as a plain record so tests can pass their own. */
export type Env = Record<string, string | undefined>;

/** Defaults, exported for `--help`. */
export const DEFAULTS = {
  maxOutbox: 50,
  maxMessageChars: 65536,
  maxSyncItems: 20,
  toolResultMaxBytes: 10000,
  toolTextIncludeBodies: true,
  maxWaitSeconds: 300,
  progressSeconds: 10,
  maxMetadataChars: 16384,
  maxAttachmentBytes: 2_097_152,
  busyTimeoutMs: 10000,
  logLevel: "warn" as LogLevel,
  embeddingsUrl: "http://127.0.0.1:11434",
  embeddingModel: "nomic-embed-text",
  embeddingsTimeoutMs: 10000,
  embeddingsRetrySeconds: 60,
  embeddingChunkChars: 1200,
  embeddingChunkOverlap: 200,
  semanticMinScore: 0.1,
  maxMailboxDepth: 10000,
  peerLeaseSeconds: 60,
  httpSessionIdleSeconds: 1800,
  httpKeepAliveSeconds: 15,
  httpWorkers: 4,
  httpPort: 8765,
  maxQuestionChars: 8000,
  maxAnswerChars: 65536,
  maxTeacherNotesChars: 16384,
  maxPublishBatch: 50,
  residentIdleMs: 600_000,
  residentWorkers: 2,
  residentPort: 8766,
} as const;

/** The default database, relative to the home directory. */
export const DEFAULT_DB_PATH = "~/.agent_bus/agent_bus.sqlite";

interface IntSpec {
  variable: string;
  fallback: number;
  min: number;
  max: number;
}

/**
 * Resolve the configuration from environment variables.
 *
 * @param env the environment, usually `Deno.env.toObject()`
 * @param options `cwd`: the directory a relative database path is resolved against (the entry
 *   point passes the process's; without it a relative path is taken as it is)
 * @returns the resolved config and one warning per unusable value
 */
export function loadConfig(
  env: Env,
  options: { cwd?: string } = {},
): { config: ResolvedConfig; warnings: ConfigWarning[] } {
  const warnings: ConfigWarning[] = [];
  env = withAgentChatBusAliases(env, warnings);
  const int = (spec: IntSpec): number => readInt(env, spec, warnings);
  const config: ResolvedConfig = {
    dbPath: resolveDbPath(env, options.cwd, warnings),
    ...readMessageLimits(env, warnings, int),
    maxWaitSeconds: int({
      variable: "AGENT_BUS_MAX_WAIT_SECONDS",
      fallback: DEFAULTS.maxWaitSeconds,
      min: 0,
      max: 86_400,
    }),
    progressSeconds: int({
      variable: "AGENT_BUS_PROGRESS_SECONDS",
      fallback: DEFAULTS.progressSeconds,
      min: 1,
      max: 3600,
    }),
    maxMetadataChars: int({
      variable: "AGENT_BUS_MAX_METADATA_CHARS",
      fallback: DEFAULTS.maxMetadataChars,
      min: 2,
      max: 1_000_000,
    }),
    maxAttachmentBytes: int({
      variable: "AGENT_BUS_MAX_ATTACHMENT_BYTES",
      fallback: DEFAULTS.maxAttachmentBytes,
      min: 1,
      max: 8_388_608,
    }),
    busyTimeoutMs: int({
      variable: "AGENT_BUS_BUSY_TIMEOUT_MS",
      fallback: DEFAULTS.busyTimeoutMs,
      min: 0,
      max: 600_000,
    }),
    logLevel: readLogLevel(env, warnings),
    noColor: (env.NO_COLOR ?? "") !== "",
    embeddings: readEmbeddings(env, warnings, int),
    maxMailboxDepth: int({
      variable: "AGENT_BUS_MAX_MAILBOX_DEPTH",
      fallback: DEFAULTS.maxMailboxDepth,
      min: 1,
      max: 10_000_000,
    }),
    peerLeaseSeconds: int({
      variable: "AGENT_BUS_PEER_LEASE_SECONDS",
      fallback: DEFAULTS.peerLeaseSeconds,
      min: 1,
      max: 86_400,
    }),
    agent: env.AGENT_BUS_AGENT?.trim() || undefined,
    role: readRole(env),
    qa: readQaLimits(int),
    toolNames: readToolNames(env, warnings),
    secrets: readSecretsMode(env, warnings),
    resident: readResident(env, warnings, int),
    http: readHttp(env, warnings, int),
  };
  return { config, warnings };
}

/** How much one message, outbox, sync and tool result may hold (`AGENT_BUS_MAX_OUTBOX`, …). */
function readMessageLimits(
  env: Env,
  warnings: ConfigWarning[],
  int: (spec: IntSpec) => number,
): Pick<
  ResolvedConfig,
  "maxOutbox" | "maxMessageChars" | "maxSyncItems" | "toolResultMaxBytes" | "toolTextIncludeBodies"
> {
  return {
    maxOutbox: int({
      variable: "AGENT_BUS_MAX_OUTBOX",
      fallback: DEFAULTS.maxOutbox,
      min: 1,
      max: 1000,
    }),
    maxMessageChars: int({
      variable: "AGENT_BUS_MAX_MESSAGE_CHARS",
      fallback: DEFAULTS.maxMessageChars,
      min: 1,
      max: 1_000_000,
    }),
    maxSyncItems: int({
      variable: "AGENT_BUS_MAX_SYNC_ITEMS",
      fallback: DEFAULTS.maxSyncItems,
      min: 1,
      max: 1000,
    }),
    toolResultMaxBytes: int({
      // AGENT_BUS_TOOL_TEXT_MAX_CHARS is the older name of the setting.
      variable: env.AGENT_BUS_TOOL_RESULT_MAX_BYTES === undefined &&
          env.AGENT_BUS_TOOL_TEXT_MAX_CHARS !== undefined
        ? "AGENT_BUS_TOOL_TEXT_MAX_CHARS"
        : "AGENT_BUS_TOOL_RESULT_MAX_BYTES",
      fallback: DEFAULTS.toolResultMaxBytes,
      min: 1000,
      max: 10_000_000,
    }),
    toolTextIncludeBodies: readBool(
      env,
      "AGENT_BUS_TOOL_TEXT_INCLUDE_BODIES",
      DEFAULTS.toolTextIncludeBodies,
      warnings,
    ),
  };
}

/** The questions-and-answers limits (`AGENT_BUS_MAX_QUESTION_CHARS`, …). */
function readQaLimits(int: (spec: IntSpec) => number): ResolvedConfig["qa"] {
  return {
    maxQuestionChars: int({
      variable: "AGENT_BUS_MAX_QUESTION_CHARS",
      fallback: DEFAULTS.maxQuestionChars,
      min: 1,
      max: 1_000_000,
    }),
    maxAnswerChars: int({
      variable: "AGENT_BUS_MAX_ANSWER_CHARS",
      fallback: DEFAULTS.maxAnswerChars,
      min: 1,
      max: 1_000_000,
    }),
    maxTeacherNotesChars: int({
      variable: "AGENT_BUS_MAX_TEACHER_NOTES_CHARS",
      fallback: DEFAULTS.maxTeacherNotesChars,
      min: 0,
      max: 1_000_000,
    }),
    maxPublishBatch: int({
      variable: "AGENT_BUS_MAX_PUBLISH_BATCH",
      fallback: DEFAULTS.maxPublishBatch,
      min: 1,
      max: 1000,
    }),
  };
}

/** The resident bus's settings (`AGENT_BUS_RESIDENT`, `AGENT_BUS_STANDALONE`, …). */
function readResident(
  env: Env,
  warnings: ConfigWarning[],
  int: (spec: IntSpec) => number,
): ResolvedConfig["resident"] {
  return {
    attach: readBool(env, "AGENT_BUS_RESIDENT", true, warnings) &&
      !readBool(env, "AGENT_BUS_STANDALONE", false, warnings),
    idleMs: int({
      variable: "AGENT_BUS_RESIDENT_IDLE_MS",
      fallback: DEFAULTS.residentIdleMs,
      min: 100,
      max: 7 * 86_400_000,
    }),
    workers: int({
      variable: "AGENT_BUS_RESIDENT_WORKERS",
      fallback: DEFAULTS.residentWorkers,
      min: 1,
      max: 64,
    }),
    home: homeDir(env),
    port: int({
      variable: "AGENT_BUS_RESIDENT_PORT",
      fallback: DEFAULTS.residentPort,
      min: 0,
      max: 65535,
    }),
  };
}

/** The HTTP server's settings (`AGENT_BUS_HTTP_HOST`, `AGENT_BUS_HTTP_PORT`, …). */
function readHttp(
  env: Env,
  warnings: ConfigWarning[],
  int: (spec: IntSpec) => number,
): ResolvedConfig["http"] {
  return {
    host: env.AGENT_BUS_HTTP_HOST?.trim() || undefined,
    port: int({
      variable: "AGENT_BUS_HTTP_PORT",
      fallback: DEFAULTS.httpPort,
      min: 0,
      max: 65535,
    }),
    token: env.AGENT_BUS_HTTP_TOKEN?.trim() || undefined,
    allowedHosts: list(env.AGENT_BUS_HTTP_ALLOWED_HOSTS),
    allowedOrigins: list(env.AGENT_BUS_HTTP_ALLOWED_ORIGINS),
    sessionIdleSeconds: int({
      variable: "AGENT_BUS_HTTP_SESSION_IDLE_SECONDS",
      fallback: DEFAULTS.httpSessionIdleSeconds,
      min: 1,
      max: 7 * 86_400,
    }),
    keepAliveSeconds: int({
      variable: "AGENT_BUS_HTTP_KEEPALIVE_SECONDS",
      fallback: DEFAULTS.httpKeepAliveSeconds,
      min: 1,
      max: 3600,
    }),
    jsonResponse: env.AGENT_BUS_HTTP_JSON_RESPONSE?.trim()
      ? readBool(env, "AGENT_BUS_HTTP_JSON_RESPONSE", false, warnings)
      : undefined,
    workers: int({
      variable: "AGENT_BUS_HTTP_WORKERS",
      fallback: DEFAULTS.httpWorkers,
      min: 1,
      max: 64,
    }),
  };
}

/** AgentChatBus's variables that mean what one of ours means: read when ours is unset. */
export const AGENTCHATBUS_ALIASES: Readonly<Record<string, string>> = {
  AGENTCHATBUS_HOST: "AGENT_BUS_HTTP_HOST",
  AGENTCHATBUS_PORT: "AGENT_BUS_HTTP_PORT",
  AGENTCHATBUS_ALLOWED_HOSTS: "AGENT_BUS_HTTP_ALLOWED_HOSTS",
};

/** AgentChatBus's variables that have no equivalent here, with what to do instead. */
const AGENTCHATBUS_INSTEAD: Readonly<Record<string, string>> = {
  AGENTCHATBUS_DB: "agent-bus keeps its own database (AGENT_BUS_DB); bring yours over with " +
    "`agent-bus db import-agentchatbus FILE`",
  AGENTCHATBUS_ADMIN_TOKEN: "set AGENT_BUS_HTTP_TOKEN, which guards every route",
};

/**
 * `env` with AgentChatBus's variables read as ours where they mean the same
 * and ours is unset; a warning names those that mean nothing here.
 */
function withAgentChatBusAliases(env: Env, warnings: ConfigWarning[]): Env {
  const aliased: Env = { ...env };
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("AGENTCHATBUS_") || value === undefined || value.trim() === "") continue;
    const ours = AGENTCHATBUS_ALIASES[name];
    if (ours !== undefined) {
      if (!env[ours]?.trim()) aliased[ours] = value;
    } else {
      ignored.push(AGENTCHATBUS_INSTEAD[name] ? `${name} (${AGENTCHATBUS_INSTEAD[name]})` : name);
    }
  }
  if (ignored.length > 0) {
    warnings.push({
      variable: "AGENTCHATBUS_*",
      value: ignored.map((entry) => entry.split(" ")[0]).join(","),
      message: `Ignoring AgentChatBus settings with no equivalent in agent-bus: ${
        ignored.sort().join(", ")
      }`,
    });
  }
  return aliased;
}

/** The user's home directory from the environment (HOME, or USERPROFILE on Windows). */
export function homeDir(env: Env): string | undefined {
  return env.HOME || env.USERPROFILE || undefined;
}

function resolveDbPath(env: Env, cwd: string | undefined, warnings: ConfigWarning[]): string {
  const raw = env.AGENT_BUS_DB?.trim() || DEFAULT_DB_PATH;
  if (raw === ":memory:") return raw;
  // A URL is never a file path: `file://` names a file, any other scheme a store (the runtime
  // says whether this build has it), so `postgres://…` cannot become a directory "postgres:".
  const scheme = urlScheme(raw);
  if (scheme === "file") return new URL(raw).pathname;
  if (scheme !== undefined) return raw;
  let path = raw;
  if (path === "~" || path.startsWith("~/") || path.startsWith("~\\")) {
    const home = homeDir(env);
    if (!home) {
      warnings.push({
        variable: "HOME",
        value: "",
        message: `Cannot expand "~" in "${raw}": HOME is not set; using the working directory`,
      });
      path = path.slice(1).replace(/^[/\\]/, "") || ".";
    } else {
      path = home + path.slice(1);
    }
  }
  if (!isAbsolute(path)) {
    if (env.AGENT_BUS_DB) {
      warnings.push({
        variable: "AGENT_BUS_DB",
        value: raw,
        message:
          `Relative database path "${raw}" depends on the working directory of each client; use an absolute path`,
      });
    }
    if (cwd !== undefined) path = `${cwd}/${path}`;
  }
  return path;
}

/**
 * The scheme of a `scheme://…` value, lower case, or undefined (a path;
 * `C:\\…` and `C:/…` are Windows paths, not URLs).
 */
export function urlScheme(value: string): string | undefined {
  const at = value.indexOf("://");
  if (at < 2 || at > 32) return undefined;
  const scheme = value.slice(0, at).toLowerCase();
  return /^[a-z][a-z0-9+.-]*$/.test(scheme) ? scheme : undefined;
}

/** A database URL with its password replaced by `***` (for messages and logs). */
export function redactUrl(value: string): string {
  return redactSecrets(value);
}

function isAbsolute(path: string): boolean {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");
}

function readInt(env: Env, spec: IntSpec, warnings: ConfigWarning[]): number {
  const raw = env[spec.variable];
  if (raw === undefined || raw.trim() === "") return spec.fallback;
  const value = Number(raw.trim());
  if (!Number.isInteger(value) || value < spec.min || value > spec.max) {
    warnings.push({
      variable: spec.variable,
      value: raw,
      message:
        `Ignoring ${spec.variable}="${raw}": expected an integer from ${spec.min} to ${spec.max}; using ${spec.fallback}`,
    });
    return spec.fallback;
  }
  return value;
}

function readBool(env: Env, variable: string, fallback: boolean, warnings: ConfigWarning[]) {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off"].includes(value)) return false;
  warnings.push({
    variable,
    value: raw,
    message: `Ignoring ${variable}="${raw}": expected 1 or 0; using ${fallback ? 1 : 0}`,
  });
  return fallback;
}

function readEmbeddings(
  env: Env,
  warnings: ConfigWarning[],
  int: (spec: IntSpec) => number,
): EmbeddingsConfig {
  const { url, api } = readEmbeddingsEndpoint(env, warnings);
  const { chunkChars, chunkOverlap } = readChunking(warnings, int);
  const minScore = readMinScore(env, warnings);
  return {
    url: trimTrailingSlashes(url),
    api,
    model: env.AGENT_BUS_EMBEDDING_MODEL?.trim() || DEFAULTS.embeddingModel,
    apiKey: env.AGENT_BUS_EMBEDDINGS_API_KEY?.trim() || undefined,
    autoindex: readBool(env, "AGENT_BUS_EMBEDDINGS_AUTOINDEX", true, warnings),
    timeoutMs: int({
      variable: "AGENT_BUS_EMBEDDINGS_TIMEOUT_MS",
      fallback: DEFAULTS.embeddingsTimeoutMs,
      min: 100,
      max: 600_000,
    }),
    retrySeconds: int({
      variable: "AGENT_BUS_EMBEDDINGS_RETRY_SECONDS",
      fallback: DEFAULTS.embeddingsRetrySeconds,
      min: 1,
      max: 86_400,
    }),
    chunkChars,
    chunkOverlap,
    minScore,
  };
}

/** The embedding endpoint's URL and API (`AGENT_BUS_EMBEDDINGS_URL`, `AGENT_BUS_EMBEDDINGS_API`). */
function readEmbeddingsEndpoint(
  env: Env,
  warnings: ConfigWarning[],
): { url: string; api: EmbeddingsApi } {
  let url = env.AGENT_BUS_EMBEDDINGS_URL?.trim() || DEFAULTS.embeddingsUrl;
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    warnings.push({
      variable: "AGENT_BUS_EMBEDDINGS_URL",
      value: url,
      message:
        `Ignoring AGENT_BUS_EMBEDDINGS_URL="${url}": expected an http(s) URL; using ${DEFAULTS.embeddingsUrl}`,
    });
    url = DEFAULTS.embeddingsUrl;
  }
  const rawApi = env.AGENT_BUS_EMBEDDINGS_API?.trim().toLowerCase() || "auto";
  if (rawApi === "ollama" || rawApi === "openai" || rawApi === "auto") return { url, api: rawApi };
  warnings.push({
    variable: "AGENT_BUS_EMBEDDINGS_API",
    value: rawApi,
    message:
      `Ignoring AGENT_BUS_EMBEDDINGS_API="${rawApi}": expected ollama, openai or auto; using auto`,
  });
  return { url, api: "auto" };
}

/** How messages are cut for embedding (`AGENT_BUS_EMBEDDING_CHUNK_SIZE`, `…_CHUNK_OVERLAP`). */
function readChunking(
  warnings: ConfigWarning[],
  int: (spec: IntSpec) => number,
): { chunkChars: number; chunkOverlap: number } {
  const chunkChars = int({
    variable: "AGENT_BUS_EMBEDDING_CHUNK_SIZE",
    fallback: DEFAULTS.embeddingChunkChars,
    min: 200,
    max: 100_000,
  });
  const chunkOverlap = int({
    variable: "AGENT_BUS_EMBEDDING_CHUNK_OVERLAP",
    fallback: DEFAULTS.embeddingChunkOverlap,
    min: 0,
    max: 50_000,
  });
  if (chunkOverlap < chunkChars / 2) return { chunkChars, chunkOverlap };
  warnings.push({
    variable: "AGENT_BUS_EMBEDDING_CHUNK_OVERLAP",
    value: String(chunkOverlap),
    message: `Ignoring AGENT_BUS_EMBEDDING_CHUNK_OVERLAP=${chunkOverlap}: it must be under half ` +
      `the chunk size (${chunkChars}); using ${Math.floor(chunkChars / 6)}`,
  });
  return { chunkChars, chunkOverlap: Math.floor(chunkChars / 6) };
}

/** The lowest similarity a semantic hit may have (`AGENT_BUS_SEMANTIC_MIN_SCORE`). */
function readMinScore(env: Env, warnings: ConfigWarning[]): number {
  const rawScore = env.AGENT_BUS_SEMANTIC_MIN_SCORE?.trim();
  if (!rawScore) return DEFAULTS.semanticMinScore;
  const value = Number(rawScore);
  if (Number.isFinite(value) && value >= -1 && value <= 1) return value;
  warnings.push({
    variable: "AGENT_BUS_SEMANTIC_MIN_SCORE",
    value: rawScore,
    message: `Ignoring AGENT_BUS_SEMANTIC_MIN_SCORE="${rawScore}": expected a number from -1 ` +
      `to 1; using ${DEFAULTS.semanticMinScore}`,
  });
  return DEFAULTS.semanticMinScore;
}

function list(raw: string | undefined): string[] {
  return (raw ?? "").split(",").map((item) => item.trim().toLowerCase()).filter(Boolean);
}

/** `MCP_ROLE`, lowercased; `serve` checks it against the profiles that are roles. */
function readRole(env: Env): string | undefined {
  return env.MCP_ROLE?.trim().toLowerCase() || undefined;
}

function readToolNames(env: Env, warnings: ConfigWarning[]): "dotted" | "underscore" {
  const raw = env.AGENT_BUS_TOOL_NAMES?.trim().toLowerCase();
  if (!raw || raw === "dotted" || raw === "dot") return "dotted";
  if (raw === "underscore") return "underscore";
  warnings.push({
    variable: "AGENT_BUS_TOOL_NAMES",
    value: raw,
    message: `Ignoring AGENT_BUS_TOOL_NAMES="${raw}": expected dotted or underscore; using dotted`,
  });
  return "dotted";
}

function readSecretsMode(env: Env, warnings: ConfigWarning[]): SecretsMode {
  const raw = env.AGENT_BUS_SECRETS?.trim().toLowerCase();
  if (!raw) return "block";
  if (raw === "block" || raw === "redact" || raw === "allow") return raw;
  warnings.push({
    variable: "AGENT_BUS_SECRETS",
    value: raw,
    message: `Ignoring AGENT_BUS_SECRETS="${raw}": expected block, redact or allow; using block`,
  });
  return "block";
}

function readLogLevel(env: Env, warnings: ConfigWarning[]): LogLevel {
  const raw = env.AGENT_BUS_LOG_LEVEL;
  if (raw === undefined || raw.trim() === "") return DEFAULTS.logLevel;
  const value = raw.trim().toLowerCase();
  if (value === "debug" || value === "info" || value === "warn" || value === "error") return value;
  warnings.push({
    variable: "AGENT_BUS_LOG_LEVEL",
    value: raw,
    message:
      `Ignoring AGENT_BUS_LOG_LEVEL="${raw}": expected debug, info, warn or error; using ${DEFAULTS.logLevel}`,
  });
  return DEFAULTS.logLevel;
}
