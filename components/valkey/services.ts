/** Services: the headless Service that gives every pod a stable DNS name, and client Services. */
import { releaseLabels } from "../shared.js";
import { VALKEY_BUS_PORT, VALKEY_PORT } from "../../vocabulary/ports.js";
import type { Service } from "./k8s-types.js";

const clientPort = { name: "valkey", port: VALKEY_PORT, targetPort: "valkey", protocol: "TCP" };
const busPort = { name: "cluster-bus", port: VALKEY_BUS_PORT, targetPort: "cluster-bus", protocol: "TCP" };

export interface HeadlessServiceOptions {
  name: string;
  namespace: string;
  release: string;
  selector: Record<string, string>;
  /** Also publish the cluster bus port. @default false */
  busPort?: boolean;
}

/**
 * Headless Service governing the StatefulSets. It publishes not-ready pods so members (and
 * replicas) resolve each other before they are ready, which a cluster needs to form at all.
 */
export function buildHeadlessService(o: HeadlessServiceOptions): Service {
  return {
    metadata: { name: o.name, namespace: o.namespace, labels: releaseLabels(o.release) },
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: { ...o.selector },
      ports: o.busPort ? [clientPort, busPort] : [clientPort],
    },
  };
}

/** A ClusterIP Service on 6379 over the pods `selector` matches (ready pods only). */
export function buildClientService(
  name: string,
  namespace: string,
  release: string,
  selector: Record<string, string>,
): Service {
  return {
    metadata: { name, namespace, labels: releaseLabels(release) },
    spec: { type: "ClusterIP", selector: { ...selector }, ports: [clientPort] },
  };
}
