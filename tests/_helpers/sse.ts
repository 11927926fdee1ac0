/**
 * A Server-Sent Events reader for tests: open `/api/events` with fetch and
 * take events one by one, each wait bounded by a deadline.
 *
 * @module
 */

/** One event as received. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: unknown;
}

/** An open event stream. */
export interface SseStream extends AsyncDisposable {
  /** Everything received so far, comments included (`: ...` lines). */
  readonly raw: string;
  /** The next event that matches `accept` (others are skipped), or a timeout error. */
  next(accept?: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves once `text` has appeared in the raw stream. */
  until(text: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Open `url` as an event stream. */
export async function openEvents(url: string, headers: HeadersInit = {}): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: abort.signal,
  });
  if (!response.ok || !response.body) {
    throw new Error(`events: HTTP ${response.status} ${await response.text()}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let raw = "";
  let buffer = "";
  const queue: SseEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        raw += value;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue;
            const at = line.indexOf(":");
            if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).trimStart();
          }
          if (fields.data !== undefined) {
            queue.push({
              id: fields.id,
              event: fields.event ?? "message",
              data: JSON.parse(fields.data),
            });
          }
        }
        wake?.();
      }
    } catch { /* aborted */ }
    ended = true;
    wake?.();
  })();

  const waitFor = async <T>(take: () => T | undefined, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = take();
      if (found !== undefined) return found;
      if (ended) throw new Error(`events: stream ended while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`events: no ${what} within ${timeoutMs} ms; got:\n${raw}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };

  const close = async () => {
    abort.abort();
    await reader.cancel().catch(() => {});
  };
  return {
    get raw() {
      return raw;
    },
    next(accept = () => true, timeoutMs = 10_000) {
      return waitFor(
        () => {
          while (queue.length > 0) {
            const event = queue.shift()!;
            if (accept(event)) return event;
          }
          return undefined;
        },
        timeoutMs,
        "matching event",
      );
    },
    async until(text, timeoutMs = 10_000) {
      await waitFor(() => raw.includes(text) ? true : undefined, timeoutMs, JSON.stringify(text));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
