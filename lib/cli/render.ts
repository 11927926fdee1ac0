/**
 * How messages look in the terminal (`watch`, `topics show`, `search`):
 * one header line per message, sender in its own colour, and either a
 * one-line preview or the whole body indented below.
 *
 * @module
 */

import type { Message } from "../bus/messages.ts";
import { localTime, type Style } from "./format.ts";

/** Length of a preview line. */
const PREVIEW_CHARS = 120;

/** A message as terminal lines. */
export function renderMessageLines(
  message: Message,
  style: Style,
  options: { full: boolean },
): string {
  const type = message.message_type === "message" ? "" : style.dim(` (${message.message_type})`);
  const reply = message.reply_to ? style.dim(` ↩ ${message.reply_to}`) : "";
  const head =
    `${style.dim(`#${message.seq}`)} ${style.dim(localTime(message.created_at).slice(11))} ` +
    `${style.byName(message.sender, style.bold(message.sender))}${type}${reply}`;
  if (options.full) {
    const body = message.content_markdown.split("\n").map((line) => `    ${line}`).join("\n");
    return `${head}\n${body}`;
  }
  const firstLine = message.content_markdown.trim().split("\n")[0] ?? "";
  const more = message.content_markdown.trim().includes("\n") || firstLine.length > PREVIEW_CHARS;
  return `${head}: ${firstLine.slice(0, PREVIEW_CHARS)}${more ? style.dim(" …") : ""}`;
}
