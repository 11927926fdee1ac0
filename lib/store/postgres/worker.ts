/**
 * The PostgreSQL side of the synchronous bridge: a worker that owns the
 * connections (`npm:postgres`) and answers one batch of statements at a time.
 *
 * The main thread writes a request into the shared buffer, posts this
 * worker an empty message and blocks on `Atomics.wait`; the message wakes
 * this worker, which runs the batch on its one query connection
 * (statements of a batch are pipelined: sent together, answered in order),
 * writes the answer and notifies. (Not `Atomics.waitAsync`: Deno settles
 * its promise only when V8's message loop is next pumped, which with
 * several such workers in one process (a resident bus on PostgreSQL) left
 * requests unseen for seconds; denoland/deno#15358.) Notifications
 * from `LISTEN` travel the other way as ordinary messages, so they reach the
 * main thread's event loop without any query being sent.
 *
 * A request whose `noWait` is set is answered at once and runs behind it on
 * the connection (a read's `COMMIT`); its error, if any, is reported with the
 * next request.
 *
 * The query connection and how a batch runs on it are in
 * `query_connection.ts`; what crosses the bridge, in `wire.ts`.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import postgres from "postgres";
import {
  ALIVE,
  decodeFrame,
  encodeFrame,
  REQUEST_SEQ,
  RESPONSE_SEQ,
  slots,
  STATE,
} from "./frames.ts";
import { clientOptions, QueryConnection } from "./query_connection.ts";
import type { WireError, WireRequest, WireResponse, WorkerEvent, WorkerInit } from "./wire.ts";

/** Wakes the loop waiting for a request (each request's message calls it). */
let wake: (() => void) | undefined;

self.onmessage = (event: MessageEvent<WorkerInit>) => {
  self.onmessage = () => wake?.();
  serve(event.data).catch((error) => {
    // The loop itself never throws; if it does, the main thread's wait times out and it
    // replaces this worker.
    self.postMessage({ kind: "listen-failed", message: String(error) } satisfies WorkerEvent);
  });
};

async function serve(init: WorkerInit): Promise<void> {
  const options = clientOptions(init);
  const connection = new QueryConnection(init, options);
  const listener = new Listener(init, options);
  const state = slots(init.buffer);
  let deferredError: WireError | undefined;
  Atomics.store(state, ALIVE, 1);
  for (;;) {
    // A request is there, or its message comes (one that came early wakes a later wait: harmless).
    while (Atomics.load(state, STATE) === 0) {
      await new Promise<void>((resolve) => wake = resolve);
      wake = undefined;
    }
    const seq = Atomics.load(state, REQUEST_SEQ);
    const request = decodeFrame(init.buffer) as WireRequest;
    let response: WireResponse;
    if (request.op === "close") {
      answer(init.buffer, seq, { ok: true, results: [] });
      await Promise.allSettled([connection.close(), listener.close()]);
      self.close();
      return;
    }
    if (request.op === "listen") {
      listener.add(request.channel);
      response = { ok: true, results: [] };
    } else if (deferredError) {
      response = { ok: false, error: deferredError };
      deferredError = undefined;
    } else if (request.noWait) {
      connection.run(request).then((r) => {
        if (!r.ok) deferredError = r.error;
      });
      response = { ok: true, results: [] };
    } else {
      response = await connection.run(request);
    }
    answer(init.buffer, seq, response);
  }
}

/**
 * The LISTEN connection, checked for liveness: every `probeEveryMs` it
 * notifies itself on a channel of its own, and when that notification has
 * not come back by the next check (a connection that stalled without
 * closing: a paused VM, a dropped route), it is replaced and the main thread
 * told, so every waiter re-reads what it may have missed.
 */
class Listener {
  readonly #init: WorkerInit;
  readonly #options: postgres.Options<Record<string, postgres.PostgresType>>;
  readonly #channels: string[] = [];
  readonly #probeChannel = `agent_bus_probe_${crypto.randomUUID().replaceAll("-", "")}`;
  #sql: postgres.Sql;
  #sent = 0;
  #heard = 0;
  #heardAt = performance.now();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(init: WorkerInit, options: postgres.Options<Record<string, postgres.PostgresType>>) {
    this.#init = init;
    this.#options = options;
    this.#sql = postgres(init.url, options);
  }

  /** Listen on `channel` (again after every reconnect, by the client). */
  add(channel: string): void {
    this.#channels.push(channel);
    this.#listen(channel);
    if (this.#timer === undefined && this.#init.probeEveryMs > 0) {
      this.#listenForProbes();
      this.#timer = setInterval(() => this.#probe(), this.#init.probeEveryMs);
    }
  }

  close(): Promise<void> {
    clearInterval(this.#timer);
    return this.#sql.end({ timeout: 1 });
  }

  #listen(channel: string): void {
    this.#sql.listen(
      channel,
      (payload) => self.postMessage({ kind: "notify", payload } satisfies WorkerEvent),
      () => self.postMessage({ kind: "listening" } satisfies WorkerEvent),
    ).catch((error) => {
      self.postMessage({ kind: "listen-failed", message: String(error) } satisfies WorkerEvent);
    });
  }

  #listenForProbes(): void {
    this.#sql.listen(this.#probeChannel, (payload) => {
      this.#heard = Math.max(this.#heard, Number(payload));
      this.#heardAt = performance.now();
    }).catch(() => {}); // a failed LISTEN shows as probes never heard
  }

  #probe(): void {
    if (this.#heard < this.#sent) {
      const silentMs = Math.round(performance.now() - this.#heardAt);
      self.postMessage({ kind: "listener-stalled", silentMs } satisfies WorkerEvent);
      this.#sql.end({ timeout: 0 }).catch(() => {});
      this.#sql = postgres(this.#init.url, this.#options);
      this.#sent = this.#heard = 0;
      this.#heardAt = performance.now();
      this.#listenForProbes();
      for (const channel of this.#channels) this.#listen(channel);
      return;
    }
    this.#sent++;
    this.#sql.notify(this.#probeChannel, String(this.#sent)).catch(() => {});
  }
}

function answer(buffer: SharedArrayBuffer, seq: number, response: WireResponse): void {
  try {
    encodeFrame(buffer, response);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    encodeFrame(buffer, {
      ok: false,
      error: { code: "FRAME_TOO_LARGE", message, connection: false },
    });
  }
  const state = slots(buffer);
  // The request is taken before the answer shows: the caller may post its next request the moment
  // it sees the answer, and clearing the state after that erased the new request's flag, which
  // left it unseen until the caller gave this worker up (12 s) and asked a new one.
  Atomics.store(state, STATE, 0);
  Atomics.store(state, RESPONSE_SEQ, seq);
  Atomics.notify(state, RESPONSE_SEQ);
}
