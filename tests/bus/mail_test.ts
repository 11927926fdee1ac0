/**
 * Peer-bus registry rules in process: a registration whose process is gone
 * is dropped at once (when this process may look at `/proc`), and a send
 * to a name nobody ever used comes with an `UNKNOWN_PEER` warning.
 */

import assert from "node:assert/strict";
import { registeredPeers } from "../../lib/bus/mail.ts";
import { write } from "../../lib/bus/mod.ts";
import { registerPeer } from "../../lib/store/mail.ts";
import { openTestBus } from "../_helpers/bus.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { tmpDir } from "../_helpers/tmp.ts";

Deno.test("registeredPeers() drops a registration whose process on this host is gone", async () => {
  if (Deno.build.os !== "linux") return; // only Linux's /proc tells; elsewhere leases decide
  await using tmp = await tmpDir();
  await using bus = openTestBus(`${tmp.path}/bus.sqlite`);
  const host = Deno.hostname();
  const now = bus.now();
  await write(bus, () => {
    for (const [name, pid] of [["alive", Deno.pid], ["dead", 2 ** 31 - 2]] as const) {
      registerPeer(bus.store, {
        name,
        holder: `${host}/${pid}/x`,
        now,
        expiresAt: now + 600,
      });
    }
    registerPeer(bus.store, {
      name: "remote",
      holder: "other-host/1/x",
      now,
      expiresAt: now + 600,
    });
  });
  assert.deepEqual(registeredPeers(bus), ["alive", "remote"]);
});

Deno.test("bus.send warns about a name no peer ever used, and lists the peers", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using alice = await connectInProcess(path, "peerbus", { server: { agent: "alice" } });
  await using bob = await connectInProcess(path, "peerbus", { server: { agent: "bob" } });
  // Registrations are made by the stdio entry point; here bob makes his name known by writing.
  await bob.client.callTool({ name: "bus.send", arguments: { to: "alice", body: "hi" } });

  const typo = await alice.client.callTool({ name: "bus.send", arguments: { to: "bbo", body: 1 } });
  const warnings = (typo.structuredContent as { warnings?: { code: string; message: string }[] })
    .warnings;
  assert.equal(warnings?.[0]?.code, "UNKNOWN_PEER");
  assert.match(warnings[0]!.message, /"bbo"/);
  assert.match((typo.content as { text: string }[])[0]!.text, /UNKNOWN_PEER/);

  const fine = await alice.client.callTool({ name: "bus.send", arguments: { to: "bob", body: 2 } });
  assert.equal((fine.structuredContent as { warnings?: unknown }).warnings, undefined);
});
