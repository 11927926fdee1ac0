/**
 * The error for a client config file we will not edit, apart from the
 * editors themselves so that the CLI's dispatcher can recognise it without
 * loading them.
 *
 * @module
 */

/** A config file we cannot safely edit. */
export class ConfigSyntaxError extends Error {
  constructor(path: string, detail: string) {
    super(`${path} is not valid (${detail}); fix or move it, then try again. Nothing was changed`);
    this.name = "ConfigSyntaxError";
  }
}
