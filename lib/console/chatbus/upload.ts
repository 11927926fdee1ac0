/**
 * AgentChatBus's image upload (`/api/upload/image`): a raster image judged
 * by its bytes, answered as a data URL, never stored or served.
 *
 * @module
 */

import { z } from "zod";
import { sniffRasterImage } from "../../bus/chat/attachments.ts";
import type { Bus } from "../../bus/mod.ts";
import { BusError, invalidArgument } from "../../errors.ts";
import { json, readCappedBody } from "../../http_respond.ts";
import { answer, route, type RouteSpec } from "../route_spec.ts";

/** The upload route. */
export function uploadRoutes(bus: Bus): RouteSpec[] {
  const routes = [
    route({
      method: "POST",
      path: "/api/upload/image",
      summary: "Upload an image (multipart field `file`) to attach to a post: PNG, JPEG, GIF, " +
        "WebP, AVIF or BMP by its bytes, at most AGENT_BUS_MAX_ATTACHMENT_BYTES; answered as a " +
        "data URL, never stored or served",
      responses: {
        "200": answer(
          "{url: data URL, name, mime_type, bytes}",
          z.object({ url: z.string(), name: z.string(), mime_type: z.string(), bytes: z.int() }),
        ),
      },
      handle: async ({ request }) =>
        json(await uploadedImage(request, bus.config.maxAttachmentBytes)),
    }),
  ];
  return routes as RouteSpec[];
}

/** The file name extensions each accepted image type may carry. */
const IMAGE_EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  "image/png": ["png"],
  "image/jpeg": ["jpg", "jpeg", "jpe", "jfif"],
  "image/gif": ["gif"],
  "image/webp": ["webp"],
  "image/avif": ["avif"],
  "image/bmp": ["bmp", "dib"],
};

/** Room for a multipart envelope around the file. */
const MULTIPART_SLACK = 16 << 10;

/**
 * The image of an upload as a data URL, when its bytes are a raster image
 * within the size limit and its name's extension, if it has one, names that
 * type; the declared type is not trusted (AgentChatBus took SVG, `.php` and
 * `.exe` as they came).
 *
 * @throws {BusError} `PAYLOAD_TOO_LARGE`, `INVALID_ARGUMENT` (no file, not a raster
 *   image, or named as another type), `UNSUPPORTED_MEDIA_TYPE` (a body that is not multipart)
 */
async function uploadedImage(
  request: Request,
  maxBytes: number,
): Promise<{ url: string; name: string; mime_type: string; bytes: number }> {
  const type = request.headers.get("content-type") ?? "";
  if (type === "") throw invalidArgument("file is required (multipart/form-data, field file)");
  if (!type.toLowerCase().startsWith("multipart/form-data")) {
    throw new BusError(
      "UNSUPPORTED_MEDIA_TYPE",
      "Send the image as multipart/form-data, field file",
    );
  }
  const body = await readCappedBody(request, maxBytes + MULTIPART_SLACK);
  if (body === undefined) {
    throw new BusError("PAYLOAD_TOO_LARGE", `An image may have at most ${maxBytes} bytes`);
  }
  const form = await new Response(body as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": type },
  }).formData()
    .catch(() => {
      throw invalidArgument("The multipart body could not be read");
    });
  const file = form.get("file");
  if (!(file instanceof File)) throw invalidArgument("file is required");
  if (file.size > maxBytes) {
    throw new BusError("PAYLOAD_TOO_LARGE", `An image may have at most ${maxBytes} bytes`);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const mimeType = sniffRasterImage(bytes);
  if (mimeType === undefined) {
    throw invalidArgument(
      "Unsupported image type: only PNG, JPEG, GIF, WebP, AVIF and BMP images are accepted " +
        "(judged by their bytes)",
    );
  }
  const name = file.name.split(/[\\/]/).pop()!.slice(0, 255);
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : undefined;
  if (extension !== undefined && !IMAGE_EXTENSIONS[mimeType]!.includes(extension)) {
    throw invalidArgument(
      `The file's name ends in .${extension.slice(0, 16)}, which does not match its content ` +
        `(${mimeType}): name an image by its type (or leave out the extension)`,
    );
  }
  return {
    url: `data:${mimeType};base64,${encodeBase64(bytes)}`,
    name,
    mime_type: mimeType,
    bytes: bytes.length,
  };
}

/** Base64 of `bytes`, in slices (no argument list as long as the file). */
function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
