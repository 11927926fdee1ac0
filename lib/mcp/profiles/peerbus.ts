/**
 * The `peerbus` profile. Seed 004: a peer-bus server bound to one name.
 *
 * @module
 */

import { mailboxPush } from "../features/mailbox_push.ts";
import { busBroadcastTool } from "../tools/bus_broadcast.ts";
import { busDrainTool } from "../tools/bus_drain.ts";
import { busPeersTool } from "../tools/bus_peers.ts";
import { busSendTool } from "../tools/bus_send.ts";
import { hookWatchOf } from "./hooks.ts";
import type { Profile } from "./profile.ts";

/** The `peerbus` profile. */
export const peerbus: Profile = {
  name: "peerbus",
  tools: [busSendTool, busBroadcastTool, busPeersTool, busDrainTool],
  instructions:
    `Peer bus: you are one named peer. bus.peers() tells your name and who else is running. bus.send(to, body) and bus.broadcast(body) send any JSON body. bus.drain() returns everything sent to you since the last drain, each message once.`,
  isRole: false,
  features: [mailboxPush],
  agent: "required",
  install: { serverName: "agent-bus-peerbus", args: ["--profile", "peerbus"] },
  stdio: { recordSession: true, registerPeer: true },
  hooks: hookWatchOf("peerbus"),
  http: { jsonResponse: false },
};
