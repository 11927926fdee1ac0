/**
 * The body of a Server-Sent Events response that never holds more than a
 * bounded amount for a client that stops reading.
 *
 * Hazard: a stream's writer does not wait for the socket; what the client
 * has not read yet waits in the stream's queue, in this process's memory.
 * Ten clients that never read took 175 MB for 18 MB of posts, and a JSON-RPC
 * batch of 20,000 requests queued gigabytes of answers. Here the queue is
 * measured in bytes: once a write would take it past `maxQueuedBytes`, the
 * stream gets one last frame (`farewell`: "you fell behind, reconnect") and
 * ends; later writes are dropped. A client that reads on gets the farewell
 * and reconnects (and resynchronises, with its last event id); one that
 * never reads holds at most the bound until its connection goes, when the
 * queue is released with the stream.
 *
 * @module
 */

const encoder = new TextEncoder();

/** What one stream holds at most for a client that does not read: 4 MiB. */
export const MAX_QUEUED_EVENT_BYTES = 4 << 20;

/** The writing end of a bounded event stream. */
export interface BoundedEventBody {
  /** The response body. */
  readonly body: ReadableStream<Uint8Array>;
  /** Queue `text`; false when the stream has ended (closed, cancelled, or the client fell behind). */
  write(text: string): boolean;
  /** End the stream (what is queued is still delivered). */
  close(): void;
  /**
   * End the stream now, dropping what is queued (the server stops: a client
   * that never reads must not hold its shutdown).
   */
  abort(): void;
  /** Bytes queued and not yet taken by the client. */
  readonly queuedBytes: number;
}

/** Options of {@linkcode boundedEventBody}. */
export interface BoundedEventOptions {
  /** Most bytes queued for the client (default {@linkcode MAX_QUEUED_EVENT_BYTES}). */
  maxQueuedBytes?: number;
  /** The last frame sent to a client that fell behind. */
  farewell: string;
  /** Called once when the stream ends, for whatever reason (stop feeding it). */
  onEnd: (reason: "closed" | "cancelled" | "behind") => void;
}

/**
 * A stream body that ends itself once a client falls `maxQueuedBytes` behind.
 */
export function boundedEventBody(options: BoundedEventOptions): BoundedEventBody {
  const max = options.maxQueuedBytes ?? MAX_QUEUED_EVENT_BYTES;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  const end = (reason: "closed" | "cancelled" | "behind" | "aborted") => {
    if (ended) return;
    ended = true;
    try {
      // (Only a stream with bytes still waiting is failed: that drops them, and Deno logs it.)
      if (reason === "aborted" && queued() > 0) {
        controller.error(new Error("The server is stopping"));
      } else if (reason !== "cancelled") controller.close();
    } catch { /* already closed by the client */ }
    options.onEnd(reason === "aborted" ? "closed" : reason);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      cancel() {
        end("cancelled");
      },
    },
    // (Measured in bytes: desiredSize is then the room left below the high-water mark.)
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );
  const queued = () => Math.max(0, -(controller.desiredSize ?? 0));
  const enqueue = (bytes: Uint8Array) => {
    try {
      controller.enqueue(bytes);
      return true;
    } catch {
      end("cancelled"); // the client has gone
      return false;
    }
  };
  return {
    body,
    write(text) {
      if (ended) return false;
      const bytes = encoder.encode(text);
      if (queued() + bytes.length > max) {
        enqueue(encoder.encode(options.farewell));
        end("behind");
        return false;
      }
      return enqueue(bytes);
    },
    close() {
      end("closed");
    },
    abort() {
      end("aborted");
    },
    get queuedBytes() {
      return ended ? 0 : queued();
    },
  };
}
