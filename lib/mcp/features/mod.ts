/**
 * Features: what a profile's server offers besides its tools (resources,
 * prompts, push notifications), each a plug-in that says which capabilities
 * it adds to `initialize` and wires its handlers into a server. A profile
 * lists its features (`../profiles/`); `createServer` loops over them.
 *
 * @module
 */

import type { Bus } from "../../bus/mod.ts";
import type { ProtocolServer } from "../protocol_server.ts";

/** How a mailbox or peer-bus server announces new mail. */
export type PushMode = "resources" | "claude-channel" | "none";

/** What a feature may use of the connection it serves. */
export interface FeatureContext {
  bus: Bus;
  /** The connection's agent name (`--agent`, or the mailbox URL's), if any. */
  agent: string | undefined;
  /** How new mail is announced. */
  push: PushMode;
  /** The URL of the MCP endpoint serving the connection (`stdio` on stdio). */
  endpoint: string;
}

/** One plug-in of a server. */
export interface Feature {
  /** Its name, as tests and the profile table show it. */
  readonly name: string;
  /** The capabilities it adds to `initialize` for this connection. */
  capabilities(ctx: FeatureContext): Record<string, unknown>;
  /**
   * Wire its handlers into `server`.
   *
   * @returns what stops it (its watches) when the server closes
   */
  attach(server: ProtocolServer, ctx: FeatureContext): () => void;
}
