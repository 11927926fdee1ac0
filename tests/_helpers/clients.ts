/**
 * Real MCP clients from npm (the ones our users run), installed once into a
 * cache directory so tests can check our server with them offline.
 *
 * @module
 */

/** Pinned client packages. */
export const CLIENT_PACKAGES = {
  inspector: "@modelcontextprotocol/inspector@0.15.0",
  claude: "@anthropic-ai/claude-code@2.1.197",
  gemini: "@google/gemini-cli@0.61.0",
  conformance: "@modelcontextprotocol/conformance@0.1.16",
  opencode: "opencode-ai@1.18.33",
  codex: "@openai/codex@0.169.0",
} as const;

/** Where the clients live, and why they are missing if they are. */
export interface Clients {
  dir: string;
  bin(name: string): string;
  /** Set when the clients could not be installed. */
  unavailable?: string;
}

/**
 * Install the pinned clients (once per machine, one process at a time) and
 * return their location.
 * Never throws: a failed install is reported in `unavailable`.
 */
export async function installClients(): Promise<Clients> {
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`;
  const dir = `${cache}/agent-bus-test-clients`;
  const bin = (name: string) => `${dir}/node_modules/.bin/${name}`;
  const marker = `${dir}/installed-${
    Object.values(CLIENT_PACKAGES).join("+").replaceAll("/", "_")
  }`;
  const installed = () => Deno.stat(marker).then(() => true, () => false);
  if (await installed()) return { dir, bin };
  try {
    await Deno.mkdir(dir, { recursive: true });
    // Test files run in parallel: one installs while the others wait for it.
    using lock = await Deno.open(`${dir}/.install-lock`, { create: true, write: true });
    await lock.lock(true);
    if (await installed()) return { dir, bin };
    const npm = Deno.build.os === "windows" ? "npm.cmd" : "npm";
    const result = await new Deno.Command(npm, {
      args: [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefix",
        dir,
        ...Object.values(CLIENT_PACKAGES),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!result.success) {
      return {
        dir,
        bin,
        unavailable: `npm install failed: ${new TextDecoder().decode(result.stderr).slice(-300)}`,
      };
    }
    await Deno.writeTextFile(marker, new Date().toISOString());
    return { dir, bin };
  } catch (error) {
    return { dir, bin, unavailable: `cannot run npm: ${error}` };
  }
}
