/**
 * AgentChatBus's server settings over REST (`GET /api/settings`,
 * `GET /api/settings/manifest`, `PUT /api/settings`), as they are here.
 *
 * agent-bus reads its settings from the environment (and `--host`/`--port`)
 * when it starts, in one place (`config.ts`), and keeps no settings file
 * that a request could rewrite. So every setting is shown read-only, with
 * the variable that sets it; a `PUT` that asks for what already runs
 * succeeds (AgentChatBus's settings dialog sends every field it shows), and
 * one that asks for a change, or names a setting agent-bus does not have,
 * is refused with one line per setting saying what to do instead.
 *
 * @module
 */

import { z } from "zod";
import { ONLINE_WINDOW_SECONDS } from "../../bus/chat/agents.ts";
import type { Bus } from "../../bus/mod.ts";
import { BusError } from "../../errors.ts";
import { json } from "../../http_respond.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";

/** The version of AgentChatBus's manifest format these answers follow. */
const MANIFEST_SCHEMA_VERSION = "2026-03-19.v2";

type SettingType = "string" | "integer" | "boolean" | "string[]";
type Section = "agent" | "network" | "advanced";

/** One AgentChatBus setting that means something here. */
interface Setting {
  key: string;
  label: string;
  type: SettingType;
  section: Section;
  description: string;
  /** Where the value comes from here, and how to change it. */
  howToSet: string;
  value(bus: Bus, url: URL): unknown;
  /** Whether it comes from the environment (else it is fixed in agent-bus). */
  fromEnv: boolean;
}

const SECTIONS: Readonly<Record<Section, { nav_label: string; title: string; order: number }>> = {
  agent: { nav_label: "Agent", title: "Timeouts", order: 10 },
  network: { nav_label: "Network", title: "Listening", order: 30 },
  advanced: { nav_label: "Advanced", title: "Advanced", order: 40 },
};

const RESTART = "when `agent-bus http` starts";

/** AgentChatBus's settings that have a meaning here, by its names, in its order. */
const SETTINGS: readonly Setting[] = [
  {
    key: "HOST",
    label: "Host",
    type: "string",
    section: "network",
    description: "The address the server listens on",
    howToSet: `Set AGENT_BUS_HTTP_HOST (or AGENTCHATBUS_HOST, or --host) ${RESTART}`,
    value: (_bus, url) => url.hostname,
    fromEnv: true,
  },
  {
    key: "PORT",
    label: "Port",
    type: "integer",
    section: "network",
    description: "The port the server listens on",
    howToSet: `Set AGENT_BUS_HTTP_PORT (or AGENTCHATBUS_PORT, or --port) ${RESTART}`,
    value: (_bus, url) => Number(url.port || (url.protocol === "https:" ? 443 : 80)),
    fromEnv: true,
  },
  {
    key: "ALLOWED_HOSTS",
    label: "Allowed hosts",
    type: "string[]",
    section: "network",
    description: "Host names accepted besides the loopback ones",
    howToSet: `Set AGENT_BUS_HTTP_ALLOWED_HOSTS (or AGENTCHATBUS_ALLOWED_HOSTS) ${RESTART}`,
    value: (bus) => bus.config.http.allowedHosts,
    fromEnv: true,
  },
  {
    key: "HEARTBEAT_TIMEOUT",
    label: "Heartbeat timeout (s)",
    type: "integer",
    section: "agent",
    description: "An agent not heard from for this long is offline",
    howToSet: `agent-bus counts an agent online for ${ONLINE_WINDOW_SECONDS} s after its last ` +
      "call, and all the while it waits in msg_wait; this is not configurable",
    value: () => ONLINE_WINDOW_SECONDS,
    fromEnv: false,
  },
  {
    key: "MSG_WAIT_MIN_TIMEOUT_MS",
    label: "msg_wait minimum timeout (ms)",
    type: "integer",
    section: "agent",
    description: "The shortest msg_wait timeout the server enforces",
    howToSet: "agent-bus enforces no minimum: a waiting msg_wait costs nothing",
    value: () => 0,
    fromEnv: false,
  },
  {
    key: "ENFORCE_MSG_WAIT_MIN_TIMEOUT",
    label: "Enforce the msg_wait minimum",
    type: "boolean",
    section: "agent",
    description: "Whether shorter msg_wait timeouts are raised to the minimum",
    howToSet: "agent-bus enforces no minimum: a waiting msg_wait costs nothing",
    value: () => false,
    fromEnv: false,
  },
  {
    key: "CONTENT_FILTER_ENABLED",
    label: "Content filter",
    type: "boolean",
    section: "advanced",
    description: "Refuse messages that look like secrets",
    howToSet: "agent-bus has no content filter",
    value: () => false,
    fromEnv: false,
  },
  {
    key: "RATE_LIMIT_ENABLED",
    label: "Rate limit",
    type: "boolean",
    section: "advanced",
    description: "Limit posts per agent per minute",
    howToSet: "agent-bus has no rate limit (fair turns keep racing agents apart)",
    value: () => false,
    fromEnv: false,
  },
];

const BY_KEY = new Map(SETTINGS.map((setting) => [setting.key, setting]));

/** Most settings one `PUT` may name (AgentChatBus has about 40). */
const MAX_PUT_KEYS = 100;

/** `PUT /api/settings`: settings by AgentChatBus's names. */
const settingsBody = z.record(z.string().max(100), z.unknown()).refine(
  (body) => Object.keys(body).length <= MAX_PUT_KEYS,
  `names at most ${MAX_PUT_KEYS} settings`,
);

/** `GET /api/settings/manifest`'s answer, in AgentChatBus's manifest format. */
const manifestSchema = z.object({
  schema_version: z.string(),
  save_message: z.string(),
  sections: z.array(z.object({
    id: z.string(),
    fields: z.array(z.object({
      key: z.string(),
      source: z.literal("config"),
      value_source: z.enum(["env", "default"]),
      label: z.string(),
      input_id: z.string(),
      type: z.string(),
      kind: z.string(),
      description: z.string(),
      section: z.string(),
      scope: z.literal("readonly"),
      sensitivity: z.string(),
      restart_required: z.boolean(),
      value: z.unknown(),
      editable: z.literal(false),
      readonly_reason: z.string(),
    })),
  })),
});

/** The settings routes. */
export function chatbusSettingsRoutes(bus: Bus): RouteSpec[] {
  const routes = [
    route({
      method: "GET",
      path: "/api/settings",
      summary: "AgentChatBus's settings as they are here, by its names",
      responses: { "200": answer("{HOST, PORT, …}", z.record(z.string(), z.unknown())) },
      handle: ({ request }) => json(currentSettings(bus, new URL(request.url))),
    }),
    route({
      method: "GET",
      path: "/api/settings/manifest",
      summary: "The settings as AgentChatBus's settings dialog shows them: every one read-only, " +
        "with the variable that sets it",
      responses: { "200": answer("{schema_version, save_message, sections}", manifestSchema) },
      handle: ({ request }) => json(manifest(bus, new URL(request.url))),
    }),
    route({
      method: "PUT",
      path: "/api/settings",
      summary: "Accepts the settings as they are; a change (agent-bus reads its settings from " +
        "the environment at start-up) or a setting it does not have is refused, each with what " +
        "to do instead, in `errors`",
      body: settingsBody,
      responses: {
        "200": answer(
          "{ok: true, message}",
          z.object({ ok: z.literal(true), message: z.string() }),
        ),
      },
      handle: ({ request, body }) => {
        const errors = refusals(bus, new URL(request.url), body);
        if (errors.length > 0) {
          throw new BusError("INVALID_ARGUMENT", `Invalid settings payload: ${errors.join("; ")}`, {
            context: { errors },
          });
        }
        return json({ ok: true, message: "Nothing to change: these are the settings that run." });
      },
    }),
  ];
  return routes as RouteSpec[];
}

/** `GET /api/settings`: each setting's value, keys sorted as AgentChatBus sorts them. */
function currentSettings(bus: Bus, url: URL): Record<string, unknown> {
  const sorted = [...SETTINGS].sort((a, b) => a.key.localeCompare(b.key));
  return Object.fromEntries(sorted.map((setting) => [setting.key, setting.value(bus, url)]));
}

/** `GET /api/settings/manifest`, in AgentChatBus's manifest format. */
function manifest(bus: Bus, url: URL) {
  const sections = (Object.keys(SECTIONS) as Section[]).map((id) => ({
    id,
    ...SECTIONS[id],
    fields: SETTINGS.filter((setting) => setting.section === id).map((setting) => ({
      key: setting.key,
      source: "config",
      value_source: setting.fromEnv ? "env" : "default",
      label: setting.label,
      input_id: `setting-${setting.key.toLowerCase().replaceAll("_", "-")}`,
      type: setting.type,
      kind: "plain",
      description: setting.description,
      section: id,
      scope: "readonly",
      sensitivity: "public",
      restart_required: setting.fromEnv,
      value: setting.value(bus, url),
      editable: false,
      readonly_reason: setting.howToSet,
    })),
  }));
  return {
    schema_version: MANIFEST_SCHEMA_VERSION,
    save_message: "agent-bus reads its settings when it starts; nothing was changed.",
    sections,
  };
}

/** One line for each setting in `body` that cannot be had: unknown here, or not what runs. */
function refusals(bus: Bus, url: URL, body: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const [key, wanted] of Object.entries(body)) {
    if (wanted === null || wanted === undefined) continue;
    const setting = BY_KEY.get(key);
    if (setting === undefined) {
      errors.push(`${key}: agent-bus has no such setting`);
    } else if (!sameValue(setting.type, wanted, setting.value(bus, url))) {
      errors.push(`${key}: ${setting.howToSet}`);
    }
  }
  return errors;
}

/** Whether `wanted`, as AgentChatBus's dialog sends it (strings for numbers, lists), is `current`. */
function sameValue(type: SettingType, wanted: unknown, current: unknown): boolean {
  switch (type) {
    case "boolean": {
      const text = String(wanted).trim().toLowerCase();
      return ["true", "1", "false", "0"].includes(text) &&
        (text === "true" || text === "1") === current;
    }
    case "integer":
      return String(wanted).trim() !== "" && Number(wanted) === current;
    case "string":
      return typeof wanted === "string" && wanted.trim() === current;
    case "string[]": {
      const list = Array.isArray(wanted)
        ? wanted.map(String)
        : typeof wanted === "string"
        ? wanted.split(",")
        : undefined;
      const have = current as string[];
      const items = list?.map((item) => item.trim()).filter((item) => item !== "");
      return items !== undefined && items.length === have.length &&
        items.every((item, i) => item === have[i]);
    }
  }
}
