/**
 * Splitting long messages into overlapping chunks for embedding.
 *
 * Embedding models read a few hundred tokens at most, and one vector for a
 * long message blurs its parts together. A chunk ends at a paragraph break
 * when there is one in its last 40 %, else at a line break, a sentence end
 * or a space; the next chunk starts `overlap` characters earlier so that a
 * sentence cut in two is still whole in one of them.
 *
 * @module
 */

/** A piece of a message: its text and where it sits in the message. */
export interface Chunk {
  start: number;
  end: number;
  text: string;
}

/** Most chunks taken from one message. */
export const MAX_CHUNKS = 64;

/**
 * Split `text` into chunks of at most `size` characters.
 *
 * @returns the non-blank chunks, in order
 */
export function chunkText(text: string, options: { size: number; overlap: number }): Chunk[] {
  const { size, overlap } = options;
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < text.length && chunks.length < MAX_CHUNKS) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) end = cutPoint(text, start, end, size);
    const piece = text.slice(start, end);
    if (piece.trim()) chunks.push({ start, end, text: piece.trim() });
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    const space = text.indexOf(" ", next);
    if (space !== -1 && space < end) next = space + 1;
    start = next;
  }
  return chunks;
}

function cutPoint(text: string, start: number, end: number, size: number): number {
  const floor = start + Math.floor(size * 0.6);
  for (const [mark, keep] of [["\n\n", 2], ["\n", 1], [". ", 2], [" ", 1]] as const) {
    const at = text.lastIndexOf(mark, end - keep);
    if (at >= floor) return at + keep;
  }
  return end;
}
