/**
 * The HTTP vocabulary the web console and the HTTP transport share: JSON
 * answers, JSON errors shaped like the tools' (`{error: {code, message}}`,
 * the same codes), inert headers, query parameters typed for a route's
 * schema, and request bodies read as JSON up to a size.
 *
 * @module
 */

import { z } from "zod";
import { BusError, httpStatusOf, invalidArgument } from "./errors.ts";

const NO_STORE = { "cache-control": "no-store" };

/**
 * Headers that keep a response from ever running in the console's origin:
 * a browser that opens it (or is sent to it by another site) gets a
 * sandboxed document that may load nothing, and no type sniffing. Every
 * `/api` response carries them; they matter most where an agent's bytes
 * are served (attachments, exports).
 */
export const INERT_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; sandbox",
  "x-content-type-options": "nosniff",
};

/** `response` with {@linkcode INERT_HEADERS} set. */
export function inert(response: Response): Response {
  for (const [name, value] of Object.entries(INERT_HEADERS)) response.headers.set(name, value);
  return response;
}

/**
 * A file an agent sent, served as data: a raster image inline with its own
 * type (`isRaster`), anything else (SVG, HTML, scripts, documents) as an
 * `application/octet-stream` download under its name. Either way inert.
 */
export function fileResponse(
  bytes: Uint8Array<ArrayBuffer>,
  options: { mimeType: string; isRaster: boolean; name: string },
): Response {
  const ascii = asciiFileName(options.name);
  const disposition = options.isRaster
    ? "inline"
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(options.name)}`;
  return inert(
    new Response(bytes, {
      headers: {
        "content-type": options.isRaster ? options.mimeType : "application/octet-stream",
        "content-disposition": disposition,
        "cache-control": "private, max-age=3600",
      },
    }),
  );
}

/** A file name that fits in a quoted header parameter: ASCII word characters, dots and dashes. */
function asciiFileName(name: string): string {
  let out = "";
  for (const char of name.slice(0, 255)) out += /[\w.-]/.test(char) ? char : "_";
  return out || "attachment";
}

/** A JSON response. */
export function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...NO_STORE, ...headers },
  });
}

/**
 * The REST wire format of an error, for anything a route threw: `{error:
 * {code, message}, detail, ...context}` with the code's HTTP status (the one
 * mapper of this wire format; MCP routes answer JSON-RPC errors instead).
 * `detail` repeats the message where AgentChatBus's clients read it; a 405
 * names the methods in `context.allowed` in its `Allow` header.
 */
export function errorResponse(error: unknown): Response {
  if (error instanceof BusError) {
    const status = httpStatusOf(error.code);
    const allowed = error.context?.allowed;
    const headers: HeadersInit = status === 405
      ? { allow: Array.isArray(allowed) ? allowed.join(", ") : "GET, POST" }
      : status === 401
      ? { "www-authenticate": "Bearer" }
      : {};
    return json(
      {
        error: { code: error.code, message: error.message },
        detail: error.message,
        ...error.context,
      },
      status,
      headers,
    );
  }
  return json(
    { error: { code: "INTERNAL_ERROR", message: "Internal error" }, detail: "Internal error" },
    500,
  );
}

/**
 * A URL's query parameters as arguments for `schema`: each value typed as
 * the schema's property wants it (`"20"` becomes 20 for an integer; `"true"`
 * or `"1"` true and `"false"` or `"0"` false for a boolean, as AgentChatBus's
 * web UI spells them; anything else stays a string, for the schema to
 * refuse), empty values left out, and `aliases` read under their own names.
 * Linear in the query.
 */
export function queryArgs(
  url: URL,
  schema: z.ZodType,
  aliases: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  const types = propertyTypes(schema);
  const args: Record<string, unknown> = {};
  for (const [name, value] of url.searchParams) {
    if (value === "") continue;
    const alias = Object.hasOwn(aliases, name) ? aliases[name]! : undefined;
    const key = alias !== undefined && !url.searchParams.has(alias) ? alias : name;
    const wanted = types.get(key) ?? new Set<string>();
    const n = Number(value);
    if ((wanted.has("integer") || wanted.has("number")) && value.trim() !== "" && isFinite(n)) {
      args[key] = n;
    } else if (wanted.has("boolean") && Object.hasOwn(BOOLEAN_WORDS, value)) {
      args[key] = BOOLEAN_WORDS[value];
    } else {
      args[key] = value;
    }
  }
  return args;
}

/** How a boolean query parameter may be spelled. */
const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  "1": true,
  false: false,
  "0": false,
};

const typesCache = new WeakMap<z.ZodType, Map<string, Set<string>>>();

/** The JSON types each property of an object schema accepts. */
function propertyTypes(schema: z.ZodType): Map<string, Set<string>> {
  let types = typesCache.get(schema);
  if (types) return types;
  types = new Map();
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, JsonType>;
  };
  for (const [name, property] of Object.entries(json.properties ?? {})) {
    const found = new Set<string>();
    const visit = (node: JsonType) => {
      for (const t of [node.type ?? []].flat()) found.add(t);
      for (const branch of node.anyOf ?? []) visit(branch);
    };
    visit(property);
    types.set(name, found);
  }
  typesCache.set(schema, types);
  return types;
}

interface JsonType {
  type?: string | string[];
  anyOf?: JsonType[];
}

/**
 * A JSON object body of at most `maxBytes`. Only `application/json` is
 * accepted: a cross-site form cannot send it without a CORS preflight,
 * which this server never grants, so this is also the CSRF defence.
 */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new BusError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json");
  }
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readCappedBody(request, maxBytes);
  if (bytes === undefined) throw tooLarge(maxBytes);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw bad("The body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw bad("The body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

const bad = invalidArgument;

function tooLarge(maxBytes: number): BusError {
  return new BusError("PAYLOAD_TOO_LARGE", `The body is larger than ${maxBytes} bytes`);
}

/**
 * A body that could not be read: the client went away before sending all
 * of it. A bad request, not a fault of the server: answered 400 (to nobody)
 * and not logged.
 */
export function bodyUnreadable(cause: unknown): BusError {
  return new BusError(
    "INVALID_ARGUMENT",
    "The request body could not be read: the client went away before sending all of it",
    { cause },
  );
}

/**
 * A request's body, or undefined once it grows past `maxBytes` (counted as it streams).
 *
 * @throws {BusError} `INVALID_ARGUMENT` when the client goes before the body ends
 */
export async function readCappedBody(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read().catch((error) => {
        throw bodyUnreadable(error);
      });
      if (done) break;
      size += value.length;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return undefined;
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}
