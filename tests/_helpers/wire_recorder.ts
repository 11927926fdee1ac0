/**
 * A TCP proxy in front of a PostgreSQL server that reads what its clients
 * send (the frontend half of the wire protocol, message by message) while
 * it forwards everything unchanged. Run as a child process (see
 * `pg_wire.ts`, which starts it and reads what it recorded):
 *
 *     deno run --allow-net wire_recorder.ts TARGET_HOST TARGET_PORT
 *
 * @module
 */

/** One message a client sent, as far as the tests look at it. */
export interface FrontendMessage {
  /** Which of the proxy's connections sent it (from 0). */
  connection: number;
  /** The message's type byte (`P` Parse, `B` Bind, `E` Execute, `H` Flush, `S` Sync, `Q` Query…). */
  type: string;
  /** Parse and Bind: the prepared statement's name. */
  name?: string;
  /** Parse and Query: the SQL text. */
  text?: string;
}

/**
 * The proxy itself: forward every connection to `targetHost:targetPort`,
 * print `listening PORT`, and answer each `dump` on stdin with one line, the
 * JSON list of the messages recorded so far.
 */
async function serve(targetHost: string, targetPort: number): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const messages: FrontendMessage[] = [];
  (async () => {
    let connections = 0;
    for await (const client of listener) {
      const id = connections++;
      const server = await Deno.connect({ hostname: targetHost, port: targetPort });
      const parser = new FrontendParser((message) => messages.push({ connection: id, ...message }));
      client.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            parser.push(chunk);
            controller.enqueue(chunk);
          },
        }),
      ).pipeTo(server.writable).catch(() => {});
      server.readable.pipeTo(client.writable).catch(() => {});
    }
  })();
  const encoder = new TextEncoder();
  const say = (line: string) => Deno.stdout.writeSync(encoder.encode(`${line}\n`));
  say(`listening ${(listener.addr as Deno.NetAddr).port}`);
  const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
  let pending = "";
  for await (const chunk of lines) {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      if (pending.slice(0, newline).trim() === "dump") say(JSON.stringify(messages));
      pending = pending.slice(newline + 1);
    }
  }
  Deno.exit(0);
}

/** Splits one connection's client-to-server bytes into messages. */
class FrontendParser {
  #buffered = new Uint8Array(0);
  #startup = true;
  readonly #emit: (message: Omit<FrontendMessage, "connection">) => void;

  constructor(emit: (message: Omit<FrontendMessage, "connection">) => void) {
    this.#emit = emit;
  }

  push(chunk: Uint8Array): void {
    const joined = new Uint8Array(this.#buffered.length + chunk.length);
    joined.set(this.#buffered);
    joined.set(chunk, this.#buffered.length);
    let at = 0;
    for (;;) {
      // The start-up message (and an SSL or GSS request before it) has no type byte.
      const head = this.#startup ? 0 : 1;
      if (joined.length - at < head + 4) break;
      const view = new DataView(joined.buffer, joined.byteOffset + at + head, 4);
      const length = view.getInt32(0);
      if (joined.length - at < head + length) break;
      const body = joined.subarray(at + head + 4, at + head + length);
      if (this.#startup) {
        const code = new DataView(body.buffer, body.byteOffset, 4).getInt32(0);
        this.#startup = code === 80877103 || code === 80877104; // (a request: start-up follows)
      } else {
        this.#emit(described(String.fromCharCode(joined[at]!), body));
      }
      at += head + length;
    }
    this.#buffered = joined.slice(at);
  }
}

const decoder = new TextDecoder();

/** The message of type `type` with `body`, with the fields the tests read. */
function described(type: string, body: Uint8Array): Omit<FrontendMessage, "connection"> {
  const strings = () => {
    const out: string[] = [];
    let start = 0;
    for (let i = 0; i < body.length && out.length < 2; i++) {
      if (body[i] === 0) {
        out.push(decoder.decode(body.subarray(start, i)));
        start = i + 1;
      }
    }
    return out;
  };
  if (type === "P") {
    const [name, text] = strings();
    return { type, name: name!, text: text! };
  }
  if (type === "B") return { type, name: strings()[1]! };
  if (type === "Q") return { type, text: strings()[0]! };
  return { type };
}

if (import.meta.main) {
  const [host, port] = Deno.args;
  if (!host || !port) throw new Error("usage: pg_wire.ts TARGET_HOST TARGET_PORT");
  await serve(host, Number(port));
}
