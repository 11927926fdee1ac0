/**
 * A host that freezes in the middle of a write: run as a child process with
 * a `postgres://` URL, it opens agent-bus's store there, begins a write
 * transaction (which takes the bus's write lock on the server), writes
 * `holding` on stdout and then blocks its only thread for good — what a
 * paused VM or a host whose network vanished looks like to PostgreSQL.
 * Whatever frees the lock must come from the server's side.
 *
 * @module
 */

import { createLogger } from "../../lib/log.ts";
import { openStore } from "../../lib/store/mod.ts";

const url = Deno.args[0];
if (!url) throw new Error("usage: freeze_in_write.ts postgres://…");
const store = openStore(url, { busyTimeoutMs: 10_000, log: createLogger("error") });
await store.immediate(() => {
  store.stmt("SELECT COUNT(*) AS n FROM topics").get();
  Deno.stdout.writeSync(new TextEncoder().encode("holding\n"));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
