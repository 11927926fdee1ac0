/**
 * `defineTool()`: the one adapter between a tool's logic and MCP.
 *
 * The SDK's own validation would turn a bad argument into a bare text error
 * with no code, so this adapter owns the whole call: it parses the
 * arguments with the tool's zod schema (failures become `INVALID_ARGUMENT`
 * naming the field), runs the tool, and shapes every outcome the same way:
 *
 * - success: text for humans and text-only clients, plus `structuredContent`
 *   matching the published `outputSchema`, with `warnings` only when there
 *   are some (repeated in the text unless the tool says otherwise);
 * - failure: `isError: true`, the text `CODE: message`, and
 *   `structuredContent = {error: {code, message}, ...context}`.
 *
 * The published `outputSchema` admits both shapes (`anyOf`), because MCP
 * clients validate `structuredContent` even on error results.
 *
 * @module
 */

import type { CallToolResult, ContentBlock, Tool as McpToolDescriptor } from "./_sdk.ts";
import { z } from "zod";
import type { Bus } from "../bus/mod.ts";
import type { Session } from "../bus/session.ts";
import type { SearchEngine } from "../search/mod.ts";
import type { ResolvedConfig } from "../config.ts";
import { BusError, invalidArgument, type Warning } from "../errors.ts";
import { parseInput } from "../validation.ts";
import type { Logger } from "../log.ts";

/** What a tool's `run` gets besides its arguments. */
export interface ToolContext {
  bus: Bus;
  search: SearchEngine;
  session: Session;
  log: Logger;
  /** Aborted when the client cancels the call or the connection closes. */
  signal: AbortSignal;
  /**
   * Send a progress notification, if the client asked for them with a
   * `progressToken` (otherwise a no-op).
   */
  progress(progress: number, total?: number, message?: string): void;
}

/** What a tool's `run` returns on success. */
export interface ToolOutput<O> {
  structured: O;
  text: string;
  warnings?: Warning[];
  /**
   * Content blocks to send instead of the text (text and `image` blocks),
   * for tools without an output schema (chatbus `msg_list`, `msg_wait`).
   */
  blocks?: ContentBlock[];
}

/** MCP tool annotations (hints for clients). */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * The mail identity of the calling session.
 *
 * @throws {BusError} `INVALID_ARGUMENT` on a server that is not bound to an agent
 */
export function requireAgent(ctx: ToolContext): string {
  if (!ctx.session.agent) {
    throw invalidArgument("This server is not bound to an agent name; mail tools need one");
  }
  return ctx.session.agent;
}

/** Everything that defines a tool. Schemas may depend on the config (limits). */
export interface ToolSpec<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  description: string | ((config: ResolvedConfig) => string);
  input: I | ((config: ResolvedConfig) => I);
  /**
   * The output schema. Left out only by tools whose result is content
   * blocks (images among them): a client given `structuredContent` may show
   * the model that instead of the blocks.
   */
  output?: O;
  annotations: ToolAnnotations;
  /**
   * `json`: the text of a result is its structured content as JSON (with
   * its warnings), and an error's is `{error: CODE, detail, ...context}`
   * (the chatbus dialect, whose clients parse AgentChatBus's JSON text).
   */
  textStyle?: "json";
  /** False only for tools that never touch the database (`ping`). */
  usesDb: boolean;
  /**
   * Repeat warnings in the text (default true). Student tools turn it off:
   * seed 001 keeps their text free of warnings (they stay in structuredContent).
   */
  warningsInText?: boolean;
  run(
    args: z.output<I>,
    ctx: ToolContext,
  ): ToolOutput<z.input<O>> | Promise<ToolOutput<z.input<O>>>;
}

/** A tool ready to list and call, with its schemas built for one config. */
export interface BoundTool {
  name: string;
  descriptor: McpToolDescriptor;
  call(rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

/** A defined tool; `bind(config)` builds its schemas. */
export interface ToolDefinition {
  name: string;
  bind(config: ResolvedConfig): BoundTool;
}

const WARNING_JSON = {
  type: "object",
  properties: {
    code: { type: "string" },
    message: { type: "string" },
    context: { type: "object" },
  },
  required: ["code"],
};

const ERROR_JSON = {
  type: "object",
  properties: { code: { type: "string" }, message: { type: "string" } },
  required: ["code", "message"],
};

/**
 * Define a tool. The returned definition validates, runs and shapes every
 * call as described in the module documentation.
 */
export function defineTool<I extends z.ZodType, O extends z.ZodType>(
  spec: ToolSpec<I, O>,
): ToolDefinition {
  return {
    name: spec.name,
    bind(config: ResolvedConfig): BoundTool {
      // Some clients reject dots in tool names: bus.send can be served as bus_send.
      const name = config.toolNames === "underscore" ? spec.name.replaceAll(".", "_") : spec.name;
      // Built on first use, not at start-up: a server answers `initialize` before it lists tools.
      let input: I | undefined;
      const inputSchema = () =>
        input ??= typeof spec.input === "function" ? spec.input(config) : spec.input;
      let descriptor: McpToolDescriptor | undefined;
      return {
        name,
        get descriptor() {
          return descriptor ??= {
            name,
            title: spec.title,
            description: typeof spec.description === "function"
              ? spec.description(config)
              : spec.description,
            inputSchema: inputJsonSchema(inputSchema()),
            ...(spec.output ? { outputSchema: outputJsonSchema(spec.output) } : {}),
            annotations: { title: spec.title, ...spec.annotations },
          };
        },
        async call(rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult> {
          try {
            // A usable store is used at once; one in trouble may wait out an outage's first seconds.
            const unusable = spec.usesDb && ctx.bus.store.check()
              ? await ctx.bus.store.ready()
              : undefined;
            if (unusable) throw unusable;
            const output = await spec.run(parseInput(inputSchema(), rawArgs ?? {}), ctx);
            return successResult(output, {
              warningsInText: spec.warningsInText ?? true,
              structured: spec.output !== undefined,
              json: spec.textStyle === "json",
            });
          } catch (error) {
            if (ctx.signal.aborted) ctx.log.debug(`${name} cancelled by the client`);
            const result = errorResult(explainReplacedFile(error, ctx), name, ctx.log);
            return spec.textStyle === "json" ? withJsonErrorText(result) : result;
          }
        },
      };
    },
  };
}

/** Errors that mean "what you had is not in the database". */
const GONE_CODES = new Set(["TOPIC_NOT_FOUND", "AGENT_NOT_JOINED", "QUESTION_NOT_FOUND"]);

/**
 * A "not found" after the database file was deleted or replaced under this
 * server says so: otherwise a client sees only that its topic vanished.
 */
function explainReplacedFile(error: unknown, ctx: ToolContext): unknown {
  const replacedAt = ctx.bus.store.replacedAt;
  if (!(error instanceof BusError) || !GONE_CODES.has(error.code) || !replacedAt) return error;
  return new BusError(
    error.code,
    `${error.message}. The database file "${ctx.bus.store.path}" was deleted or replaced at ` +
      `${replacedAt.toISOString()} while this server ran; what was stored before is not in it`,
    { context: error.context, cause: error },
  );
}

/** The error result for a `BusError` (or `INTERNAL_ERROR` for anything else). */
export function errorResult(error: unknown, toolName: string, log: Logger): CallToolResult {
  let busError: BusError;
  if (error instanceof BusError) {
    busError = error;
  } else {
    log.error(`Tool ${toolName} failed`, {
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    busError = new BusError(
      "INTERNAL_ERROR",
      `Tool ${toolName} failed unexpectedly; the server log has details`,
    );
  }
  return {
    isError: true,
    content: [{ type: "text", text: `${busError.code}: ${busError.message}` }],
    structuredContent: {
      ...busError.context,
      error: { code: busError.code, message: busError.message },
    },
  };
}

function successResult<O>(
  output: ToolOutput<O>,
  options: { warningsInText: boolean; structured: boolean; json: boolean },
): CallToolResult {
  const warnings = output.warnings ?? [];
  const structured = { ...(output.structured as Record<string, unknown>) };
  let text = output.text;
  if (warnings.length > 0) structured.warnings = warnings;
  if (options.json && options.structured) {
    text = JSON.stringify(structured);
  } else if (warnings.length > 0 && options.warningsInText) {
    text += "\n" + warnings.map((w) => `warning ${w.code}${w.message ? `: ${w.message}` : ""}`)
      .join("\n");
  }
  const content: ContentBlock[] = output.blocks ?? [{ type: "text", text }];
  return options.structured ? { content, structuredContent: structured } : { content };
}

/** An error result whose text is AgentChatBus's JSON: `{error: CODE, detail, ...context}`. */
function withJsonErrorText(result: CallToolResult): CallToolResult {
  const { error, ...context } = result.structuredContent as {
    error: { code: string; message: string };
  };
  const text = JSON.stringify({ error: error.code, detail: error.message, ...context });
  return { ...result, content: [{ type: "text", text }] };
}

function inputJsonSchema(schema: z.ZodType): McpToolDescriptor["inputSchema"] {
  const json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  delete json.$schema;
  return json as McpToolDescriptor["inputSchema"];
}

function outputJsonSchema(schema: z.ZodType): McpToolDescriptor["outputSchema"] {
  const json = z.toJSONSchema(schema, { io: "output" }) as Record<string, unknown>;
  delete json.$schema;
  // Error results carry `error` plus context fields instead of the success fields.
  delete json.additionalProperties;
  const properties = (json.properties ?? {}) as Record<string, unknown>;
  properties.warnings = { type: "array", items: WARNING_JSON };
  properties.error = ERROR_JSON;
  const required = (json.required ?? []) as string[];
  delete json.required;
  json.properties = properties;
  json.anyOf = [{ required }, { required: ["error"] }];
  return json as McpToolDescriptor["outputSchema"];
}
