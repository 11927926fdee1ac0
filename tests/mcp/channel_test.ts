/**
 * `--push claude-channel` delivers every waiting message, however large:
 * each drain takes what fits one result's budget, and the drain's own
 * commit wakes the push again until the mailbox is empty.
 */

import assert from "node:assert/strict";
import { z } from "zod";
import { sendMail } from "../../lib/bus/mail.ts";
import { connectInProcess } from "../_helpers/in_process.ts";
import { until } from "../_helpers/peer.ts";
import { tmpDir } from "../_helpers/tmp.ts";

const Channel = z.object({
  method: z.literal("notifications/claude/channel"),
  params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }),
});

Deno.test("claude-channel pushes mail larger than one result's budget, all of it", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using sender = await connectInProcess(path, "peerbus", { server: { agent: "alice" } });
  const bodies = [1, 2, 3].map((i) => `${i} ${"x".repeat(8_000)}`);
  for (const content of bodies) {
    await sendMail(sender.bus, { from: "alice", to: "cc", content, format: "text", source: "cli" });
  }
  const pushed: string[] = [];
  await using _cc = await connectInProcess(path, "peerbus", {
    server: { agent: "cc", push: "claude-channel" },
    onClient: (client) =>
      client.setNotificationHandler(Channel as never, (n: z.infer<typeof Channel>) => {
        if (n.params.meta.event !== "announce") pushed.push(n.params.content);
      }),
  });
  await until(() => pushed.length === 3, { timeoutMs: 10_000, what: "every message pushed" });
  assert.deepEqual(pushed, bodies);
});
