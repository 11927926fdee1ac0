/**
 * Image attachments of chatbus messages (research 2.12): taken from
 * `metadata.attachments` (or the legacy `images` / `image` keys) as
 * `{type: "image", mimeType, data}` with base64 data or a data URL, stored
 * apart from the message (so v6.3 readers of the metadata never carry
 * megabytes of base64), and handed back as MCP `image` content blocks.
 * The metadata keeps a stub per image: `{type, mimeType, bytes}`.
 *
 * Every check is linear in the input and bounded: at most
 * {@linkcode MAX_ATTACHMENTS} images of `AGENT_BUS_MAX_ATTACHMENT_BYTES` each.
 *
 * @module
 */

import { invalidArgument } from "../../errors.ts";

/** Most images on one message. */
export const MAX_ATTACHMENTS = 4;
/** Longest MIME type. */
const MAX_MIME_CHARS = 100;
/** Longest URL kept for an attachment given by URL. */
const MAX_URL_CHARS = 2048;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MIME = /^image\/[A-Za-z0-9.+-]+$/;

/** One image ready to store. */
export interface NewImage {
  mimeType: string;
  data: string;
}

/** Metadata with its images taken out, and the images. */
export interface SplitAttachments {
  metadata: Record<string, unknown> | null;
  images: NewImage[];
}

/**
 * Take the images out of `metadata`.
 *
 * @throws {BusError} `INVALID_ARGUMENT` for a malformed or too large attachment
 */
export function splitAttachments(
  metadata: Record<string, unknown> | null | undefined,
  maxBytes: number,
): SplitAttachments {
  if (!metadata) return { metadata: metadata ?? null, images: [] };
  const key = ["attachments", "images", "image"].find((k) => metadata[k] !== undefined);
  if (key === undefined) return { metadata, images: [] };
  const raw = metadata[key];
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > MAX_ATTACHMENTS) {
    throw invalidArgument(
      `metadata.${key} has ${list.length} items; the most is ${MAX_ATTACHMENTS}`,
    );
  }
  const images: NewImage[] = [];
  const stubs = list.map((item, index) => {
    const at = `metadata.${key}[${index}]`;
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw invalidArgument(`${at} must be an object like {type: "image", mimeType, data}`);
    }
    const fields = item as Record<string, unknown>;
    const image = readImage(fields, at, maxBytes);
    if (!image) return urlStub(fields, at);
    images.push(image);
    return { type: "image", mimeType: image.mimeType, bytes: decodedBytes(image.data) };
  });
  const { [key]: _, ...rest } = metadata;
  return { metadata: { ...rest, attachments: stubs }, images };
}

function readImage(
  fields: Record<string, unknown>,
  at: string,
  maxBytes: number,
): NewImage | undefined {
  let data = fields.data ?? fields.base64 ?? fields.b64 ?? fields.data_url;
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
  const kind = fields.type ?? fields.kind;
  mimeType ??= "image/png";
  if (kind !== undefined && kind !== "image") {
    throw invalidArgument(`${at}.type must be "image" (only images can be attached)`);
  }
  if (typeof mimeType !== "string" || mimeType.length > MAX_MIME_CHARS || !MIME.test(mimeType)) {
    throw invalidArgument(`${at}.mimeType must be an image/* MIME type`);
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
  return { mimeType, data: text };
}

/** An attachment given by URL is kept as a reference (the bus fetches nothing). */
function urlStub(fields: Record<string, unknown>, at: string): Record<string, unknown> {
  const url = fields.url ?? fields.src;
  if (typeof url !== "string" || !url || url.length > MAX_URL_CHARS) {
    throw invalidArgument(
      `${at} needs base64 data (or a url of at most ${MAX_URL_CHARS} characters)`,
    );
  }
  return { type: "image", url };
}

function decodedBytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor(base64.length / 4) * 3 - padding;
}
