/**
 * Human-readable tool text.
 *
 * Many clients show a model only the text part of a result, so the text
 * carries everything an agent needs to act: ids, seqs, and message bodies
 * (cut only past the configured budget, with a note that says so).
 *
 * @module
 */

import type { Message } from "../bus/messages.ts";

/** Length of a body preview when whole bodies are turned off. */
export const PREVIEW_CHARS = 80;

/**
 * Cut `text` to `max` characters, saying how much was left out.
 *
 * @param where what to read for the full text
 */
export function truncate(text: string, max: number, where = "structuredContent"): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… [${text.length - max} more characters; full text in ${where}]`;
}

/** A message as a header line and its body. */
export function renderMessage(
  message: Message,
  options: { maxBodyChars: number; includeBody: boolean },
): string {
  const reply = message.reply_to ? ` reply_to=${message.reply_to}` : "";
  const header =
    `[${message.seq}] ${message.sender} (${message.message_type}) id=${message.message_id}${reply}`;
  const body = options.includeBody
    ? truncate(message.content_markdown, options.maxBodyChars)
    : oneLine(message.content_markdown, PREVIEW_CHARS);
  return `${header}\n${body}`;
}

/** The first `max` characters of `text` on one line. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** A double-quoted value for key="value" pairs. */
export function quote(value: string): string {
  return JSON.stringify(value);
}
