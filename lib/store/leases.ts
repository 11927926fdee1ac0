/**
 * SQL for leases: a named role that one process holds at a time, and that
 * expires if its holder dies without releasing it.
 *
 * @module
 */

import type { Store } from "./types.ts";

/**
 * Take or renew the lease `name` for `holder` until `expiresAt`, if it is
 * free, expired, or already ours. Call inside a write transaction.
 *
 * @returns true when `holder` holds the lease afterwards
 */
export function claimLease(
  store: Store,
  lease: { name: string; holder: string; now: number; expiresAt: number },
): boolean {
  store.stmt(
    `INSERT INTO bus_leases (name, holder, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
     WHERE bus_leases.holder = excluded.holder OR bus_leases.expires_at < ?`,
  ).run(lease.name, lease.holder, lease.expiresAt, lease.now);
  return leaseHolder(store, { name: lease.name, now: lease.now }) === lease.holder;
}

/** Give up the lease if `holder` has it. */
export function releaseLease(
  store: Store,
  { name, holder }: { name: string; holder: string },
): void {
  store.stmt("DELETE FROM bus_leases WHERE name = ? AND holder = ?").run(name, holder);
}

/** Who holds the lease now (undefined when free or expired). */
export function leaseHolder(
  store: Store,
  { name, now }: { name: string; now: number },
): string | undefined {
  const row = store.stmt("SELECT holder, expires_at FROM bus_leases WHERE name = ?").get(name) as
    | { holder: string; expires_at: number }
    | undefined;
  return row && row.expires_at >= now ? row.holder : undefined;
}
