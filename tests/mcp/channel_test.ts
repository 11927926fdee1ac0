/**
 * `--push claude-channel` delivers every waiting message, however large:
 * each drain takes what fits one result's budget, and the drain's own
 * commit wakes the push again until the mailbox is empty; it announces
 * once however often the client says it is initialized. Resource errors
 * keep their kind: the client's mistakes are InvalidParams or
 * resource-not-found, the server's trouble is InternalError.
 */

import assert from "node:assert/strict";
import { z } from "zod";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { BusError } from "../../lib/errors.ts";
import { known, RESOURCE_NOT_FOUND } from "../../lib/mcp/invalid_params.ts";
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

Deno.test("a second notifications/initialized announces nothing and starts no second watch", async () => {
  await using tmp = await tmpDir();
  const path = `${tmp.path}/bus.sqlite`;
  await using sender = await connectInProcess(path, "peerbus", { server: { agent: "alice" } });
  const pushed: z.infer<typeof Channel>["params"][] = [];
  await using cc = await connectInProcess(path, "peerbus", {
    server: { agent: "cc", push: "claude-channel" },
    onClient: (client) =>
      client.setNotificationHandler(
        Channel as never,
        (n: z.infer<typeof Channel>) => void pushed.push(n.params),
      ),
  });
  await until(() => pushed.length === 1, { timeoutMs: 10_000, what: "the announcement" });
  await cc.client.notification({ method: "notifications/initialized" });
  await sendMail(sender.bus, {
    from: "alice",
    to: "cc",
    content: "one",
    format: "text",
    source: "cli",
  });
  await until(() => pushed.some((p) => p.content === "one"), {
    timeoutMs: 10_000,
    what: "the mail pushed",
  });
  assert.deepEqual(pushed.map((p) => p.meta.event ?? p.content), ["announce", "one"]);
});

Deno.test("resource errors: an unknown mailbox URI is resource-not-found; a busy database is the server's error, not InvalidParams", async () => {
  await using tmp = await tmpDir();
  await using bob = await connectInProcess(`${tmp.path}/bus.sqlite`, "mailbox", {
    server: { agent: "bob" },
  });
  await assert.rejects(
    bob.client.readResource({ uri: "mailbox://alice" }),
    (error: McpError) =>
      error.code === RESOURCE_NOT_FOUND && /Unknown resource/.test(error.message),
  );
  for (
    const [code, kind] of [
      ["TOPIC_NOT_FOUND", ErrorCode.InvalidParams],
      ["INVALID_ARGUMENT", ErrorCode.InvalidParams],
      ["DB_BUSY", ErrorCode.InternalError],
      ["DB_UNAVAILABLE", ErrorCode.InternalError],
    ] as const
  ) {
    assert.throws(
      () =>
        known(() => {
          throw new BusError(code, "x");
        }),
      (error: McpError) => error.code === kind && (error.data as { code: string }).code === code,
      code,
    );
  }
});
