/**
 * Each member's `availability-zone` from the zone the bootstrap knows (pod -> node -> zone
 * label), set with CONFIG SET where the server's differs. The start script sets it from the
 * pod's zone label, which Kubernetes copies from the node only from 1.35: on EKS 1.33/1.34 the
 * label is absent and, without this, the AZ failback loop sees no zones and does nothing. The
 * member's failback loop keeps the value on its data volume (az-failback-script.ts zoneFile),
 * and the start script reads it back on the next start, so a restart keeps it.
 *
 * Run by the ClusterBootstrap step (in the dynamic-provider process: no @pulumi/pulumi import) and by the local
 * cluster drills without zone labels.
 */
import type { ClusterMember } from "./cluster-member.js";
import { ConnectionPool, type Connector } from "../topology/connector.js";

export interface ZoneAnnouncements {
  /** `<id>: availability-zone <zone>`, per member whose value was set. */
  set: string[];
  /** Per server without the setting (Valkey < 8.1: `CONFIG GET` answers nothing). */
  unsupported: string[];
}

/**
 * Sets `availability-zone` on every member with a zone whose server reports another value.
 * Members without a zone are left alone.
 */
export async function announceZones(
  members: readonly Pick<ClusterMember, "id" | "zone" | "endpoint">[],
  connector: Connector,
): Promise<ZoneAnnouncements> {
  const pool = new ConnectionPool(connector);
  try {
    const out: ZoneAnnouncements = { set: [], unsupported: [] };
    await Promise.all(
      members
        .filter((m) => m.zone !== "")
        .map(async (m) => {
          const client = await pool.get(m.endpoint);
          const got = (await client.call("CONFIG", "GET", "availability-zone")) as string[];
          if (got.length < 2) {
            out.unsupported.push(
              `${m.id}: this server has no availability-zone setting (Valkey < 8.1); zones come from the zone map only`,
            );
          } else if (got[1] !== m.zone) {
            await client.call("CONFIG", "SET", "availability-zone", m.zone);
            out.set.push(`${m.id}: availability-zone ${m.zone}`);
          }
        }),
    );
    return { set: out.set.sort(), unsupported: out.unsupported.sort() };
  } finally {
    await pool.closeAll();
  }
}
