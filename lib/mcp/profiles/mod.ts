/**
 * The profiles of the bus: the one list of them, and how to find one. Each
 * profile is a file of its own here; `profile.ts` says what a profile is.
 *
 * @module
 */

import { chatbus } from "./chatbus.ts";
import { mailbox } from "./mailbox.ts";
import { peer } from "./peer.ts";
import { peerbus } from "./peerbus.ts";
import type { Profile } from "./profile.ts";
import { student } from "./student.ts";
import { teacher } from "./teacher.ts";

export type { Profile } from "./profile.ts";
export type { Feature, FeatureContext } from "../features/mod.ts";

/** Every profile, the default (`peer`) first. */
export const PROFILES: readonly Profile[] = [peer, peerbus, mailbox, teacher, student, chatbus];

/** Their names, in the list's order. */
export const PROFILE_NAMES: readonly string[] = PROFILES.map((p) => p.name);

/** The profile called `name`, or undefined. */
export function profileNamed(name: string): Profile | undefined {
  return PROFILES.find((p) => p.name === name);
}

/**
 * The built-in profile `name`.
 *
 * @throws {Error} for a name no profile has (a mistake in the caller)
 */
export function profile(name: string): Profile {
  const found = profileNamed(name);
  if (!found) throw new Error(`No profile "${name}"; the profiles are ${PROFILE_NAMES.join(", ")}`);
  return found;
}

/** The profiles `--role` and `MCP_ROLE` choose from. */
export const ROLES: readonly Profile[] = PROFILES.filter((p) => p.isRole);

/** The profile's tools a connection gets: `noDrain` leaves `bus.drain` out (push-driven clients). */
export function toolsOf(chosen: Profile, options: { noDrain?: boolean } = {}) {
  return options.noDrain ? chosen.tools.filter((tool) => tool.name !== "bus.drain") : chosen.tools;
}
