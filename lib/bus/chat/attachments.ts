/**
 * Attachments of chatbus messages (seed 002: "file or image"; research
 * 2.12): taken from `metadata.attachments` (or the legacy `images` / `image`
 * keys) as `{type: "image" | "file", mimeType, data, name?}` with base64 data
 * or a data URL, stored apart from the message (so v6.3 readers of the
 * metadata never carry megabytes of base64), and handed back as MCP `image`
 * blocks (images) or embedded `resource` blocks (files). The metadata keeps
 * a stub per attachment: `{type, mimeType, bytes, name?}`.
 *
 * Whatever an agent attaches is data, never code: the console serves it
 * through {@linkcode isRasterImage} (only raster images are shown inline;
 * SVG, HTML and the rest are downloads), see `lib/console/api.ts`.
 *
 * Every check is linear in the input and bounded: at most
 * {@linkcode MAX_ATTACHMENTS} attachments of `AGENT_BUS_MAX_ATTACHMENT_BYTES` each.
 *
 * @module
 */

import { invalidArgument } from "../../errors.ts";

/** Most attachments on one message. */
export const MAX_ATTACHMENTS = 4;
/** Longest MIME type. */
const MAX_MIME_CHARS = 100;
/** Longest URL kept for an attachment given by URL. */
const MAX_URL_CHARS = 2048;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** `type/subtype` (RFC 6838 names; the first class cannot match the slash, so it is linear). */
const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;
/** Longest file name kept. */
const MAX_NAME_CHARS = 255;
/** Images a browser draws without running anything: the only types served inline. */
const RASTER_IMAGES = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "image/bmp",
]);

/**
 * The raster image type `bytes` hold, read from their first bytes (the
 * declared type is not trusted), or undefined for anything else. Reads at
 * most the first 12 bytes.
 */
export function sniffRasterImage(bytes: Uint8Array): string | undefined {
  const at = (offset: number, ...expected: number[]) =>
    expected.every((byte, i) => bytes[offset + i] === byte);
  const ascii = (offset: number, text: string) =>
    at(offset, ...[...text].map((char) => char.charCodeAt(0)));
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (ascii(0, "GIF87a") || ascii(0, "GIF89a")) return "image/gif";
  if (ascii(0, "RIFF") && ascii(8, "WEBP")) return "image/webp";
  if (ascii(4, "ftypavif") || ascii(4, "ftypavis")) return "image/avif";
  if (ascii(0, "BM") && bytes.length >= 26) return "image/bmp";
  return undefined;
}

/** Whether `mimeType` is a raster image a browser may show inline (SVG is not: it can hold script). */
export function isRasterImage(mimeType: string): boolean {
  return RASTER_IMAGES.has(mimeType.toLowerCase());
}

/** One attachment ready to store. */
export interface NewAttachment {
  mimeType: string;
  data: string;
}

/** Metadata with its attachments taken out, and the attachments. */
export interface SplitAttachments {
  metadata: Record<string, unknown> | null;
  attachments: NewAttachment[];
}

/**
 * Take the attachments out of `metadata`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a malformed or too large attachment
 */
export function splitAttachments(
  metadata: Record<string, unknown> | null | undefined,
  maxBytes: number,
): SplitAttachments {
  if (!metadata) return { metadata: metadata ?? null, attachments: [] };
  const key = ["attachments", "images", "image"].find((k) => metadata[k] !== undefined);
  if (key === undefined) return { metadata, attachments: [] };
  const raw = metadata[key];
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > MAX_ATTACHMENTS) {
    throw invalidArgument(
      `metadata.${key} has ${list.length} items; the most is ${MAX_ATTACHMENTS}`,
    );
  }
  const attachments: NewAttachment[] = [];
  const stubs = list.map((item, index) => {
    const at = `metadata.${key}[${index}]`;
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw invalidArgument(`${at} must be an object like {type: "image", mimeType, data}`);
    }
    const fields = item as Record<string, unknown>;
    const read = readAttachment(fields, at, maxBytes);
    if (!read) return urlStub(fields, at);
    attachments.push(read.attachment);
    return {
      type: read.kind,
      mimeType: read.attachment.mimeType,
      bytes: decodedBytes(read.attachment.data),
      ...(read.name === undefined ? {} : { name: read.name }),
    };
  });
  const { [key]: _, ...rest } = metadata;
  return { metadata: { ...rest, attachments: stubs }, attachments };
}

/** An attachment with data: what to store, its kind and its file name. */
interface ReadAttachment {
  attachment: NewAttachment;
  kind: "image" | "file";
  name: string | undefined;
}

function readAttachment(
  fields: Record<string, unknown>,
  at: string,
  maxBytes: number,
): ReadAttachment | undefined {
  // (AgentChatBus's chat panel sends an uploaded image as {url: "data:…", name}.)
  const inlineUrl = typeof fields.url === "string" && fields.url.startsWith("data:")
    ? fields.url
    : undefined;
  let data = fields.data ?? fields.base64 ?? fields.b64 ?? fields.data_url ?? inlineUrl;
  let mimeType = fields.mimeType ?? fields.mime_type;
  if (data === undefined) return undefined;
  if (typeof data !== "string") throw invalidArgument(`${at}.data must be a base64 string`);
  if (data.startsWith("data:")) {
    const comma = data.indexOf(",");
    const header = data.slice(5, comma === -1 ? 5 : Math.min(comma, 5 + MAX_MIME_CHARS + 8));
    if (comma === -1 || !header.endsWith(";base64")) {
      throw invalidArgument(`${at}.data is a data URL without ";base64,"`);
    }
    mimeType ??= header.slice(0, -";base64".length);
    data = data.slice(comma + 1);
  }
  const given = fields.type ?? fields.kind;
  if (given !== undefined && given !== "image" && given !== "file") {
    throw invalidArgument(`${at}.type must be "image" or "file"`);
  }
  mimeType ??= given === "file" ? "application/octet-stream" : "image/png";
  if (typeof mimeType !== "string" || mimeType.length > MAX_MIME_CHARS || !MIME.test(mimeType)) {
    throw invalidArgument(`${at}.mimeType must be a MIME type like image/png or text/plain`);
  }
  const type = mimeType.toLowerCase();
  const kind = given ?? (type.startsWith("image/") ? "image" : "file");
  if (kind === "image" && !type.startsWith("image/")) {
    throw invalidArgument(`${at}.mimeType must be image/* for an image (or set type: "file")`);
  }
  const text = data as string;
  if (decodedBytes(text) > maxBytes) {
    throw invalidArgument(
      `${at} is ${decodedBytes(text)} bytes; the largest attachment is ${maxBytes} bytes ` +
        "(AGENT_BUS_MAX_ATTACHMENT_BYTES)",
    );
  }
  if (text.length % 4 !== 0 || !BASE64.test(text)) {
    throw invalidArgument(`${at}.data is not valid base64`);
  }
  return { attachment: { mimeType: type, data: text }, kind, name: fileName(fields, at) };
}

/**
 * The attachment's file name (`name` or `filename`), reduced to its last
 * path part with control characters removed; undefined when none is given.
 */
function fileName(fields: Record<string, unknown>, at: string): string | undefined {
  const raw = fields.name ?? fields.filename;
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || raw.length > MAX_NAME_CHARS) {
    throw invalidArgument(`${at}.name must be a file name of at most ${MAX_NAME_CHARS} characters`);
  }
  let base = "";
  for (const char of raw) {
    if (char === "/" || char === "\\") base = "";
    else if (char >= " " && char !== "\u007f") base += char;
  }
  base = base.trim();
  return base === "" || base === "." || base === ".." ? undefined : base;
}

/** An attachment given by URL is kept as a reference, with its name (the bus fetches nothing). */
function urlStub(fields: Record<string, unknown>, at: string): Record<string, unknown> {
  const url = fields.url ?? fields.src;
  if (typeof url !== "string" || !url || url.length > MAX_URL_CHARS) {
    throw invalidArgument(
      `${at} needs base64 data (or a url of at most ${MAX_URL_CHARS} characters)`,
    );
  }
  const name = fileName(fields, at);
  return { type: "image", url, ...(name === undefined ? {} : { name }) };
}

function decodedBytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor(base64.length / 4) * 3 - padding;
}

/** An image of a message as AgentChatBus's clients show it: a URL and a name. */
export interface ImageLink {
  url: string;
  name: string;
}

/**
 * The images in a message's metadata as AgentChatBus's clients read them
 * (`metadata.images`): a stored image by the inert attachment route
 * `GET /api/messages/{id}/attachments/{n}` (`n` counts the stored
 * attachments), an image given by URL as it was given. Linear in the stubs.
 */
export function imageLinks(
  messageId: string,
  metadata: Record<string, unknown> | null,
): ImageLink[] {
  const stubs = metadata?.attachments;
  if (!Array.isArray(stubs)) return [];
  const links: ImageLink[] = [];
  let stored = 0;
  for (const stub of stubs.slice(0, MAX_ATTACHMENTS)) {
    if (stub === null || typeof stub !== "object") continue;
    const { type, url, bytes, name } = stub as Record<string, unknown>;
    const label = typeof name === "string" ? name : "image";
    if (typeof bytes === "number") {
      const n = stored++;
      if (type !== "image") continue;
      links.push({
        url: `/api/messages/${encodeURIComponent(messageId)}/attachments/${n}`,
        name: label,
      });
    } else if (typeof url === "string") {
      links.push({ url, name: label });
    }
  }
  return links;
}
