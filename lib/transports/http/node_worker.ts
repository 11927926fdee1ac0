/**
 * A session worker of an `agent-bus http` node on PostgreSQL (see
 * `node_pool.ts`): it opens a runtime of its own and answers the requests
 * the front hands it with the node's handler, telling the front which
 * sessions it holds and what their tool lists are. While one of its calls
 * waits for the database, this thread is blocked; the front and the other
 * workers are not.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { BusError } from "../../errors.ts";
import { errorResponse } from "../../http_respond.ts";
import { createLogger } from "../../log.ts";
import { profileNamed } from "../../mcp/profiles/mod.ts";
import { type Node, openNode } from "./node.ts";
import type { FromNodeWorker, ToNodeWorker } from "./node_pool.ts";

const post = (message: FromNodeWorker, transfer: Transferable[] = []) =>
  self.postMessage(message, transfer);
let node: Node | undefined;

self.onmessage = async (event: MessageEvent<ToNodeWorker>) => {
  const data = event.data;
  if (data.kind === "request") await serve(data);
  else if (data.kind === "abort") clients.get(data.id)?.abort();
  else if (data.kind === "touch") node?.handler.touch(data.sessionId);
  else if (data.kind === "start") start(data.options);
  else if (data.kind === "stop") {
    await node?.close();
    post({ kind: "stopped" });
    self.close();
  }
};

function start(options: Extract<ToNodeWorker, { kind: "start" }>["options"]): void {
  try {
    node = openNode({
      ...options,
      log: createLogger(options.config.logLevel),
      atMcp: profileNamed(options.atMcp),
      observer: {
        opened: (sessionId, route) => post({ kind: "opened", sessionId, route }),
        closed: (sessionId) => post({ kind: "closed", sessionId }),
      },
    });
    post({ kind: "ready" });
  } catch (error) {
    const failure = error instanceof BusError
      ? error
      : new BusError("INTERNAL_ERROR", String(error));
    post({ kind: "failed", code: failure.code, message: failure.message });
  }
}

/** The requests being answered, by id: aborted when their client goes (the front says so). */
const clients = new Map<number, AbortController>();

async function serve(request: Extract<ToNodeWorker, { kind: "request" }>): Promise<void> {
  const client = new AbortController();
  clients.set(request.id, client);
  let response: Response;
  try {
    response = await node!.handler.handle(
      new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: client.signal,
      }),
    );
  } catch (error) {
    response = errorResponse(error);
  } finally {
    clients.delete(request.id);
  }
  const body = response.body;
  post({
    kind: "response",
    id: request.id,
    status: response.status,
    headers: [...response.headers],
    body,
  }, body ? [body] : []);
}
