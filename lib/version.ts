/**
 * Version facts, from `deno.json` so there is one place to bump.
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };

/** This program's version, e.g. `0.1.0`. */
export const PACKAGE_VERSION: string = denoJson.version;

/** The Agent Bus peer contract this server implements. */
export const SPEC_VERSION = "v6.3";

/** The teacher/student contract (seed 001) the role servers implement. */
export const QA_SPEC_VERSION = "v3.1";
