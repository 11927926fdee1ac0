/**
 * Temporary directories that remove themselves (`await using`).
 *
 * @module
 */

/** A temp dir, deleted with its contents when disposed. */
export interface TmpDir extends AsyncDisposable {
  path: string;
}

/** Make a temp dir for one test. */
export async function tmpDir(prefix = "agent-bus-test-"): Promise<TmpDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}
