/**
 * Real valkey-server processes seen as the pods of release `vc` (`vc-<i>`, pod IP 127.0.0.1, their
 * own ports), spread over the nodes of `zoneOfNode` in turn: the PodApi the steps' implementations
 * are tested through.
 */
import type { ValkeyProcess } from "../../harness/local/valkey-process.js";
import { StaticPodApi } from "../../components/kubernetes/static-pod-api.js";

export function serversAsPods(servers: readonly ValkeyProcess[], zoneOfNode: Record<string, string>): StaticPodApi {
  const nodes = Object.keys(zoneOfNode);
  return new StaticPodApi(
    servers.map((s, i) => ({
      name: `vc-${i}`,
      podIP: "127.0.0.1",
      nodeName: nodes[i % nodes.length],
      labels: { "app.kubernetes.io/instance": "vc" },
      ports: { "valkey": s.port, "cluster-bus": s.clusterPort ?? 0 },
    })),
    zoneOfNode,
  );
}
