/**
 * Where each MCP client keeps its server list, in which format, and what
 * one server entry looks like there. Paths follow each client's own
 * documentation for user and project scope.
 *
 * @module
 */

import type { Launch } from "../../launch.ts";

/** The clients `agent-bus install` knows. */
export const CLIENT_IDS = [
  "claude-code",
  "codex",
  "gemini",
  "cursor",
  "opencode",
  "vscode",
] as const;
export type ClientId = typeof CLIENT_IDS[number];
export type Scope = "user" | "project";

/** A server attached to by URL, and the headers every request carries (its token). */
export interface Remote {
  url: string;
  headers: Record<string, string>;
}

/** Where a client's settings live. */
export interface Places {
  home: string;
  cwd: string;
  env: Record<string, string | undefined>;
  os: typeof Deno.build.os;
}

/** One client's config file and entry shape. */
export interface ClientSpec {
  id: ClientId;
  title: string;
  format: "json" | "toml";
  /** The file for a scope. */
  path(scope: Scope, places: Places): string;
  /** Key path of the map of servers inside the file. */
  serversKey: string[];
  /**
   * The entry for one server; with `trust`, marked so that the client runs
   * its tools without asking (where the entry can say so).
   */
  entry(launch: Launch, options?: { trust?: boolean }): Record<string, unknown>;
  /** The entry for a server the client attaches to by URL (Streamable HTTP). */
  urlEntry(remote: Remote, options?: { trust?: boolean }): Record<string, unknown>;
  /** Keys a brand-new file starts with. */
  skeleton?: Record<string, unknown>;
}

const join = (...parts: string[]) => parts.join("/").replace(/\/+/g, "/");

function vscodeUserDir(places: Places): string {
  if (places.os === "darwin") return join(places.home, "Library/Application Support/Code/User");
  if (places.os === "windows") {
    return join(places.env.APPDATA || join(places.home, "AppData/Roaming"), "Code/User");
  }
  return join(places.env.XDG_CONFIG_HOME || join(places.home, ".config"), "Code/User");
}

const stdioEntry = (launch: Launch, extra: Record<string, unknown> = {}) => ({
  ...extra,
  command: launch.command,
  args: launch.args,
  ...(Object.keys(launch.env).length ? { env: launch.env } : {}),
});

/**
 * Codex begins a session's first turn without a server that has not
 * answered `initialize` yet (the agent never joins); a required server is
 * waited for, up to `startup_timeout_sec` (10 s by default: a busy machine
 * has taken longer). If agent-bus cannot start, Codex says so and does not
 * start the session.
 */
const CODEX_STARTUP = { required: true, startup_timeout_sec: 60 };

/** Every client, by id. */
export const CLIENTS: Record<ClientId, ClientSpec> = {
  "claude-code": {
    id: "claude-code",
    title: "Claude Code",
    format: "json",
    path: (scope, p) => scope === "user" ? join(p.home, ".claude.json") : join(p.cwd, ".mcp.json"),
    serversKey: ["mcpServers"],
    entry: (launch) => stdioEntry(launch, { type: "stdio" }),
    urlEntry: ({ url, headers }) => ({ type: "http", url, headers }),
  },
  codex: {
    id: "codex",
    title: "Codex",
    format: "toml",
    path: (scope, p) =>
      scope === "user"
        ? join(p.env.CODEX_HOME || join(p.home, ".codex"), "config.toml")
        : join(p.cwd, ".codex/config.toml"),
    serversKey: ["mcp_servers"],
    entry: (launch, options) =>
      stdioEntry(launch, {
        ...CODEX_STARTUP,
        ...(options?.trust ? { default_tools_approval_mode: "approve" } : {}),
      }),
    // (Codex refuses a token written as `bearer_token`; `http_headers` it sends as they are.)
    urlEntry: ({ url, headers }, options) => ({
      url,
      http_headers: headers,
      ...(options?.trust ? { default_tools_approval_mode: "approve" } : {}),
    }),
  },
  gemini: {
    id: "gemini",
    title: "Gemini CLI",
    format: "json",
    path: (scope, p) => join(scope === "user" ? p.home : p.cwd, ".gemini/settings.json"),
    serversKey: ["mcpServers"],
    entry: (launch, options) => ({
      ...stdioEntry(launch),
      ...(options?.trust ? { trust: true } : {}),
    }),
    // (`httpUrl` is Streamable HTTP; `url` would be the older HTTP+SSE transport.)
    urlEntry: ({ url, headers }, options) => ({
      httpUrl: url,
      headers,
      ...(options?.trust ? { trust: true } : {}),
    }),
  },
  cursor: {
    id: "cursor",
    title: "Cursor",
    format: "json",
    path: (scope, p) => join(scope === "user" ? p.home : p.cwd, ".cursor/mcp.json"),
    serversKey: ["mcpServers"],
    entry: (launch) => stdioEntry(launch),
    urlEntry: ({ url, headers }) => ({ url, headers }),
  },
  opencode: {
    id: "opencode",
    title: "OpenCode",
    format: "json",
    path: (scope, p) =>
      scope === "user"
        ? join(p.env.XDG_CONFIG_HOME || join(p.home, ".config"), "opencode/opencode.json")
        : join(p.cwd, "opencode.json"),
    serversKey: ["mcp"],
    entry: (launch) => ({
      type: "local",
      command: [launch.command, ...launch.args],
      enabled: true,
      ...(Object.keys(launch.env).length ? { environment: launch.env } : {}),
    }),
    urlEntry: ({ url, headers }) => ({ type: "remote", url, enabled: true, headers }),
    skeleton: { $schema: "https://opencode.ai/config.json" },
  },
  vscode: {
    id: "vscode",
    title: "VS Code",
    format: "json",
    path: (scope, p) =>
      scope === "user" ? join(vscodeUserDir(p), "mcp.json") : join(p.cwd, ".vscode/mcp.json"),
    serversKey: ["servers"],
    entry: (launch) => stdioEntry(launch, { type: "stdio" }),
    urlEntry: ({ url, headers }) => ({ type: "http", url, headers }),
  },
};

/** The server an entry of `client`'s config attaches to by URL (the inverse of `urlEntry`). */
export function remoteOf(client: ClientSpec, entry: unknown): Remote | undefined {
  if (entry === null || typeof entry !== "object") return undefined;
  const e = entry as Record<string, unknown>;
  const url = client.id === "gemini" ? e.httpUrl : e.url;
  const headers = client.id === "codex" ? e.http_headers : e.headers;
  if (typeof url !== "string") return undefined;
  const strings = headers !== null && typeof headers === "object"
    ? Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]))
    : {};
  return { url, headers: strings };
}

/** The launch an entry of `client`'s config describes (the inverse of `entry`). */
export function launchOf(client: ClientSpec, entry: unknown): Launch | undefined {
  if (entry === null || typeof entry !== "object") return undefined;
  const e = entry as Record<string, unknown>;
  const strings = (value: unknown) => Array.isArray(value) ? value.map(String) : [];
  const env = (value: unknown) =>
    value !== null && typeof value === "object"
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]))
      : {};
  if (client.id === "opencode") {
    const [command, ...args] = strings(e.command);
    return command === undefined ? undefined : { command, args, env: env(e.environment) };
  }
  return typeof e.command === "string"
    ? { command: e.command, args: strings(e.args), env: env(e.env) }
    : undefined;
}
