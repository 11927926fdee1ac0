/**
 * What the hooks watch for a session of each profile, besides the topics it
 * holds a name in. Apart from the profiles' own files so that the hook,
 * which must start fast, reads it without loading the tools.
 *
 * @module
 */

/** What a session's hooks watch besides its topics. */
export interface HookWatch {
  /** The session's mailbox (its agent's unread mail). */
  readonly mail: boolean;
  /** The students' questions waiting anywhere on the bus. */
  readonly questionQueue: boolean;
}

const TOPICS_ONLY: HookWatch = { mail: false, questionQueue: false };

/** By profile name; a profile's file takes its entry from here. */
const WATCHES: Readonly<Record<string, HookWatch>> = {
  peerbus: { mail: true, questionQueue: false },
  teacher: { mail: false, questionQueue: true },
};

/** What the hooks watch for a session recorded under `profileName`. */
export function hookWatchOf(profileName: string): HookWatch {
  return Object.hasOwn(WATCHES, profileName) ? WATCHES[profileName]! : TOPICS_ONLY;
}
