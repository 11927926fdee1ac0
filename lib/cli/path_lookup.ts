/**
 * Finding a program the way a shell does: a path is taken as it is, a bare
 * name is looked up in the directories of a `PATH` value (the environment
 * the command was given, which in tests is not this process's own).
 *
 * @module
 */

/** The executable `command` names, looked up in `pathVar` when bare, or undefined. */
export function findExecutable(command: string, pathVar: string): string | undefined {
  const executable = (file: string) => {
    try {
      const info = Deno.statSync(file);
      return info.isFile && (Deno.build.os === "windows" || ((info.mode ?? 0o111) & 0o111) !== 0);
    } catch {
      return false;
    }
  };
  if (/[\\/]/.test(command)) return executable(command) ? command : undefined;
  return pathVar.split(Deno.build.os === "windows" ? ";" : ":")
    .filter((dir) => dir !== "")
    .map((dir) => `${dir}/${command}`)
    .find(executable);
}
