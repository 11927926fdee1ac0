/**
 * The session worker of a stdio server on PostgreSQL (see `stdio.ts`): it
 * runs the MCP session (`stdio_session.ts`) and talks to the front, which
 * owns stdin and stdout, through messages (`worker_port.ts`). While one of
 * its calls waits for the database, this worker's thread is blocked, and the
 * front keeps answering what needs no database.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { createLogger } from "../log.ts";
import { profileNamed } from "../mcp/profiles/mod.ts";
import { openStdioSession, type StdioSession } from "./stdio_session.ts";
import { type FromWorker, type ToWorker, WorkerSideTransport } from "./worker_port.ts";

const post = (message: FromWorker) => self.postMessage(message);
const transport = new WorkerSideTransport(post);
let session: StdioSession | undefined;
let stopAsked = false;

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const data = event.data;
  if (data.kind === "message") transport.deliver(data.message);
  else if (data.kind === "stop") {
    stopAsked = true;
    await transport.close();
  } else if (data.kind === "start" && session === undefined) {
    const log = createLogger(data.options.config.logLevel);
    const profile = profileNamed(data.options.profile)!; // (the front chose a built-in one)
    session = await openStdioSession(transport, { ...data.options, profile }, log);
    if (stopAsked) await session.stop(); // (stdin ended while the session opened)
    await session.closed;
    post({ kind: "closed" });
    self.close();
  }
};
