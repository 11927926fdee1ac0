/**
 * What `doctor` says of a client's entry that attaches to the resident bus
 * by URL (`install --url`): whether the bus of this database runs and
 * serves that address, and whether the entry carries the bus's token.
 * Read from the bus's status and its token file: nothing is sent to the URL.
 *
 * @module
 */

import type { CliContext } from "../command.ts";
import type { Remote } from "./clients.ts";
import { residentAddress, statusAt } from "../../transports/resident/protocol.ts";
import { readToken, tokenPath } from "../../transports/resident/token.ts";

/** A finding about one entry, without its check's name. */
export interface RemoteFinding {
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}

/** Check the entry `where` of client `id`, which attaches to `remote`. */
export async function checkRemote(
  ctx: CliContext,
  id: string,
  where: string,
  remote: Remote,
): Promise<RemoteFinding> {
  const address = residentAddress(ctx.config);
  const reinstall = `\`agent-bus install ${id} --url\` again`;
  if ("none" in address) {
    return { status: "warn", detail: `${where} attaches by URL, but ${address.none}` };
  }
  const token = await readToken(tokenPath(address.socket)).catch(() => undefined);
  if (token === undefined || remote.headers.Authorization !== `Bearer ${token}`) {
    return {
      status: "fail",
      detail: `${where} attaches to ${remote.url} without the bus's token`,
      fix: reinstall,
    };
  }
  const answer = await statusAt(address.socket);
  const served = answer?.ok ? answer.bus : undefined;
  const origin = (url: string) => URL.canParse(url) ? new URL(url).origin : url;
  if (served?.url == null || origin(served.url) !== origin(remote.url)) {
    const port = URL.canParse(remote.url) ? new URL(remote.url).port : "";
    return {
      status: "fail",
      detail: `${where} attaches to ${remote.url}, which ${
        served?.url ? `is not served (the bus serves ${served.url})` : "no bus serves"
      }`,
      fix: served?.url
        ? `\`agent-bus bus stop\`, then \`agent-bus bus start --port ${port}\``
        : `\`agent-bus bus start --port ${port}\``,
    };
  }
  return {
    status: "ok",
    detail: `${where} attaches to ${remote.url}, served by the resident bus (pid ${served.pid})`,
  };
}
