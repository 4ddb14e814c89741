/**
 * RollingRestart's real outside world, from its inputs: the API server (kube-api.ts), and the
 * TopologyCheck's verifier and connector on the pods as they are at each call (pods come back
 * with new IPs: every call discovers them again).
 */
import { parseEndpoint } from "../../../vocabulary/endpoint.js";
import { kubeDeps } from "../kit/kube-access.js";
import { kubernetesVerifier } from "../topology-check/implementation.js";
import type { RollingRestartInputs } from "./declaration.js";
import type { RollDeps } from "./types.js";
import { kubernetesRollApi } from "./kube-api.js";

export async function rollDepsFor(i: RollingRestartInputs): Promise<RollDeps> {
  const kube = kubeDeps(i);
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
    log: (line) => console.error(line),
  };
}
