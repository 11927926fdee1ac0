/**
 * A minimal MCP server on the SDK's `Protocol` layer.
 *
 * The SDK's `Server` class adds three things on top of `Protocol`: the
 * `initialize` handshake, capability checks for requests sent to the
 * client, and validation of `tools/call` requests and results. We need only
 * the first: this server never sends requests to the client, and the
 * `defineTool()` adapter validates arguments and shapes results itself. The
 * rest costs: `Server` loads ajv for elicitation schemas, about 10 MB of
 * memory in every agent's process. `Protocol` still does the JSON-RPC work:
 * request routing, `ping`, cancellation, progress, and timeouts.
 *
 * @module
 */

import {
  type Implementation,
  InitializedNotificationSchema,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
  LATEST_PROTOCOL_VERSION,
  Protocol,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./_sdk.ts";

/** An MCP server that answers `initialize` and whatever handlers are set on it. */
export class ProtocolServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  /** Called once the client has sent `notifications/initialized`. */
  oninitialized?: () => void;

  /**
   * @param info the name and version sent to clients
   * @param options capabilities and the instructions string of `initialize`
   */
  constructor(
    info: Implementation,
    options: { capabilities: ServerCapabilities; instructions?: string },
  ) {
    super();
    const initialize = (request: InitializeRequest): InitializeResult => {
      const requested = request.params.protocolVersion;
      return {
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
          ? requested
          : LATEST_PROTOCOL_VERSION,
        capabilities: options.capabilities,
        serverInfo: info,
        ...(options.instructions ? { instructions: options.instructions } : {}),
      };
    };
    this.setRequestHandler(InitializeRequestSchema, initialize);
    this.setNotificationHandler(InitializedNotificationSchema, () => this.oninitialized?.());
  }

  // This server sends no requests to the client and offers no tasks, so
  // there is no capability to check in either direction.
  protected override assertCapabilityForMethod(): void {}
  protected override assertNotificationCapability(): void {}
  protected override assertRequestHandlerCapability(): void {}
  protected override assertTaskCapability(): void {}
  protected override assertTaskHandlerCapability(): void {}
}
