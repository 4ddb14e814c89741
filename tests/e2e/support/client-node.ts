/**
 * A fourth Valkey-pool node for a Job pod that may not share a node with a Valkey pod (the
 * benchmark's, the failure drill's load): added only once the release's Valkey pods are placed on
 * the first three (added earlier, it could take a Valkey pod and leave the Job pod nowhere to go).
 */
import { eventually } from "../../support/processes.js";
import { addValkeyPoolNode } from "./byo-config.js";
import type { E2eContext } from "./e2e-context.js";

/** A /24 of the plane's pod /16 that no node of the plane has (they use third octets 1-4). */
function podCidrOf(ctx: E2eContext): string {
  return ctx.plane.podCidr.replace(/^(\d+\.\d+)\.0\.0\/16$/, "$1.9.0/24");
}

/** Waits until `count` Valkey pods of `namespace` are placed, then adds the node `name` in `zone`. */
export async function addClientNodeOnceValkeyPlaced(
  ctx: E2eContext,
  namespace: string,
  count: number,
  name: string,
  zone: string,
): Promise<void> {
  await eventually(`the ${count} Valkey pods placed`, 300_000, async () => {
    const pods = (await ctx.core.listNamespacedPod({ namespace, labelSelector: "app.kubernetes.io/name=valkey" }))
      .items;
    return pods.length === count && pods.every((p) => p.spec?.nodeName !== undefined) ? true : undefined;
  });
  // A pod CIDR of its own (the plane's /16, third octet 9): fresh pod IPs need one per node.
  await addValkeyPoolNode(ctx.plane, name, zone, podCidrOf(ctx));
}
