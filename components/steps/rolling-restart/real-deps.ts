/**
 * RollingRestart's real outside world, from its inputs: the API server (kube-api.ts), and the
 * TopologyCheck's verifier and connector on the pods as they are at each call (pods come back
 * with new IPs: every call discovers them again).
 */
import { sentinelsCounted } from "../../../core/roll/endpoints-settled.js";
import { parseEndpoint } from "../../../vocabulary/endpoint.js";
import { discoverPods } from "../../kubernetes/pod-discovery.js";
import { PortForwardConnector } from "../../kubernetes/port-forward-connector.js";
import { kubeDeps, type KubeDeps } from "../kit/kube-access.js";
import { kubernetesVerifier } from "../topology-check/implementation.js";
import type { RollingRestartInputs } from "./declaration.js";
import type { RollDeps } from "./types.js";
import { kubernetesRollApi } from "./kube-api.js";

/** undefined once every Ready HAProxy pod answers 200 on `/sentinels` (through the checks' connector), else why not. */
async function proxiesSettled(
  i: RollingRestartInputs,
  proxy: NonNullable<RollingRestartInputs["proxy"]>,
  kube: KubeDeps,
): Promise<string | undefined> {
  const pods = (
    await discoverPods(kube.podApi, {
      namespace: i.namespace,
      selector: proxy.selector,
      portsOf: () => ({ port: proxy.statusPort, busPort: 0 }),
    })
  ).filter((p) => p.ready && p.podIP !== undefined);
  if (pods.length === 0) return `no Ready HAProxy pod matches '${proxy.selector}' in namespace ${i.namespace}`;
  const connector = kube.connector(pods);
  try {
    for (const p of pods) {
      const at = { host: p.podIP as string, port: proxy.statusPort };
      const status =
        connector instanceof PortForwardConnector ? { host: "127.0.0.1", port: await connector.localPort(at) } : at;
      const why = await sentinelsCounted(status, `HAProxy pod ${p.name}`);
      if (why !== undefined) return why;
    }
    return undefined;
  } finally {
    await connector.close();
  }
}

export async function rollDepsFor(i: RollingRestartInputs): Promise<RollDeps> {
  const kube = kubeDeps(i);
  const proxy = i.proxy;
  const verifier = () => kubernetesVerifier({ ...i, countKeys: false }, kube);
  return {
    api: await kubernetesRollApi(i.kubeconfig, i.context),
    verify: async () => {
      const v = await verifier();
      try {
        return await v.verify();
      } finally {
        await v.close();
      }
    },
    failover: async (address) => {
      const v = await verifier();
      try {
        const c = await v.connector.connect(parseEndpoint(address));
        try {
          await c.call("CLUSTER", "FAILOVER");
        } finally {
          c.disconnect();
        }
      } finally {
        await v.close();
      }
    },
    ...(proxy === undefined ? {} : { endpointsSettled: () => proxiesSettled(i, proxy, kube) }),
    log: (line) => console.error(line),
  };
}
