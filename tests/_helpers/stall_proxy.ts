/**
 * A TCP proxy that can stop forwarding without closing anything: what a
 * dropped Wi-Fi link, a paused VM or a stuck middlebox looks like to both
 * ends. Run as a child process (inside a host's network namespace):
 *
 *     deno run --allow-net stall_proxy.ts LISTEN_PORT TARGET_HOST TARGET_PORT
 *
 * It prints `listening PORT` once it accepts connections (LISTEN_PORT 0
 * picks a free one), then obeys lines on
 * stdin: `stall` (stop reading and writing on every connection, new ones
 * included; the kernel still acknowledges what fits in its buffers, so no
 * keepalive or user timeout fires on the client's side) and `resume`,
 * answering each with `stalled` / `resumed`.
 *
 * @module
 */

const [listenPort, targetHost, targetPort] = Deno.args;
if (!listenPort || !targetHost || !targetPort) {
  throw new Error("usage: stall_proxy.ts LISTEN_PORT TARGET_HOST TARGET_PORT");
}

/** Resolves while forwarding; while stalled, a promise that resolves on `resume`. */
let gate: Promise<void> = Promise.resolve();
let reopen: (() => void) | undefined;

async function pump(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      await gate;
      const n = await from.read(buffer);
      if (n === null) break;
      await gate;
      let written = 0;
      while (written < n) written += await to.write(buffer.subarray(written, n));
    }
  } catch {
    // One side went away: close both below.
  }
  for (const conn of [from, to]) {
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}

async function forward(client: Deno.Conn): Promise<void> {
  await gate;
  let server: Deno.Conn;
  try {
    server = await Deno.connect({ hostname: targetHost!, port: Number(targetPort) });
  } catch {
    client.close();
    return;
  }
  void pump(client, server);
  void pump(server, client);
}

const listener = Deno.listen({ hostname: "127.0.0.1", port: Number(listenPort) });
const encoder = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(encoder.encode(`${line}\n`));
(async () => {
  for await (const conn of listener) void forward(conn);
})();
say(`listening ${listener.addr.port}`);

const decoder = new TextDecoder();
let pending = "";
for await (const chunk of Deno.stdin.readable) {
  pending += decoder.decode(chunk, { stream: true });
  let newline;
  while ((newline = pending.indexOf("\n")) >= 0) {
    const command = pending.slice(0, newline).trim();
    pending = pending.slice(newline + 1);
    if (command === "stall" && reopen === undefined) {
      const { promise, resolve } = Promise.withResolvers<void>();
      gate = promise;
      reopen = resolve;
      say("stalled");
    } else if (command === "resume" && reopen !== undefined) {
      reopen();
      reopen = undefined;
      gate = Promise.resolve();
      say("resumed");
    }
  }
}
listener.close();
