/**
 * What the fake model endpoints share (`fake_anthropic.ts`, `fake_openai.ts`,
 * `fake_gemini.ts`): a scripted list of tool calls, the tool results a real
 * client sends back (with when they arrived), and a loopback server that
 * records them. Each fake adds only its wire format.
 *
 * @module
 */

/** One scripted tool call. */
export interface ScriptedCall {
  /** The tool's name as the client lists it (`mcp__agent-bus__sync`, ...). */
  name: string;
  input: Record<string, unknown>;
}

/** A tool result as the client sent it back. */
export interface SeenResult {
  toolUseId: string;
  /** The result's content, flattened to text. */
  text: string;
  isError: boolean;
  /** `performance.now()` when the request carrying it arrived. */
  at: number;
}

/** A running fake endpoint. */
export interface FakeModel extends AsyncDisposable {
  url: string;
  /** Tool results received so far, in order. */
  results: SeenResult[];
  /** `performance.now()` when each scripted call was handed out, by call id. */
  calledAt: Map<string, number>;
  /** Every request body received. */
  requests: Record<string, unknown>[];
  /** `performance.now()` when each of `requests` arrived. */
  requestTimes: number[];
}

/** The recorded state a fake's handler reads and adds to. */
export type FakeState = Pick<FakeModel, "results" | "calledAt" | "requests" | "requestTimes">;

/** Serve `handle` on a free loopback port, with fresh recorded state. */
export function serveFakeModel(
  handle: (request: Request, state: FakeState) => Promise<Response>,
): FakeModel {
  const state: FakeState = { results: [], calledAt: new Map(), requests: [], requestTimes: [] };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => handle(request, state),
  );
  const { port } = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${port}`,
    ...state,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/**
 * The next scripted call to hand out, with its id, or undefined when the
 * script is done (or that call was already handed out).
 */
export function nextCall(
  script: readonly ScriptedCall[],
  state: FakeState,
  idPrefix: string,
): { id: string; call: ScriptedCall } | undefined {
  const call = script[state.results.length];
  const id = `${idPrefix}_${state.results.length}`;
  if (!call || state.calledAt.has(id)) return undefined;
  state.calledAt.set(id, performance.now());
  return { id, call };
}
