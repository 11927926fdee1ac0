/**
 * The web console's HTTP vocabulary: JSON answers, JSON errors shaped like
 * the tools' (`{error: {code, message}}`, the same codes), query parameters
 * checked against bounds, and request bodies read as JSON up to a size.
 *
 * @module
 */

import { BusError, httpStatusOf, invalidArgument } from "../errors.ts";

const NO_STORE = { "cache-control": "no-store" };

/** A JSON response. */
export function json(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...NO_STORE, ...headers },
  });
}

/**
 * The REST wire format of an error, for anything a route threw: `{error:
 * {code, message}, ...context}` with the code's HTTP status (the one mapper
 * of this wire format; MCP routes answer JSON-RPC errors instead).
 */
export function errorResponse(error: unknown): Response {
  if (error instanceof BusError) {
    const status = httpStatusOf(error.code);
    const headers: HeadersInit = status === 405
      ? { allow: "GET, POST" }
      : status === 401
      ? { "www-authenticate": "Bearer" }
      : {};
    return json(
      { error: { code: error.code, message: error.message }, ...error.context },
      status,
      headers,
    );
  }
  return json({ error: { code: "INTERNAL_ERROR", message: "Internal error" } }, 500);
}

/** Reads a request's query parameters, refusing bad values with `INVALID_ARGUMENT`. */
export class Query {
  readonly #params: URLSearchParams;

  constructor(url: URL) {
    this.#params = url.searchParams;
  }

  /** A string parameter, at most `maxChars` long. */
  string(name: string, maxChars = 1000): string | undefined {
    const value = this.#params.get(name);
    if (value === null || value === "") return undefined;
    if (value.length > maxChars) throw bad(`${name} is longer than ${maxChars} characters`);
    return value;
  }

  /** An integer parameter within `[min, max]`. */
  int(name: string, bounds: { min: number; max: number }): number | undefined;
  int(name: string, bounds: { min: number; max: number; fallback: number }): number;
  int(name: string, bounds: { min: number; max: number; fallback?: number }): number | undefined {
    const raw = this.string(name, 20);
    if (raw === undefined) return bounds.fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < bounds.min || n > bounds.max) {
      throw bad(`${name} must be an integer from ${bounds.min} to ${bounds.max}`);
    }
    return n;
  }

  /** One of `choices`. */
  choice<const C extends readonly string[]>(name: string, choices: C, fallback: C[number]) {
    const value = this.string(name, 50) ?? fallback;
    if (!choices.includes(value)) throw bad(`${name} must be one of ${choices.join(", ")}`);
    return value as C[number];
  }
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

/** A field of a JSON body that must be a string (or absent). */
export function stringField(
  body: Record<string, unknown>,
  name: string,
): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw bad(`${name} must be a string`);
  return value;
}

const bad = invalidArgument;

function tooLarge(maxBytes: number): BusError {
  return new BusError("PAYLOAD_TOO_LARGE", `The body is larger than ${maxBytes} bytes`);
}

/** A request's body, or undefined once it grows past `maxBytes` (counted as it streams). */
export async function readCappedBody(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
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
