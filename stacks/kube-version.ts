/**
 * The Kubernetes version a byo cluster runs, read at preview from its API server (`GET /version`)
 * through the kubeconfig and context the stack uses (platform.ts byoKubeconfigPath), for the
 * checks that depend on it.
 */
import * as k8s from "@kubernetes/client-node";
import type { StackConfig } from "../config/types.js";
import { kubernetesVersionOf, type KubeVersionProbe } from "../components/capacity/preflight.js";
import { byoKubeconfigPath } from "./platform.js";

/** The byo stack's kubeconfig and context as a client config (what every preview-time read of the cluster uses). */
export function byoKubeConfig(config: StackConfig): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(byoKubeconfigPath(config));
  if (config.byo.context !== undefined) kc.setCurrentContext(config.byo.context);
  return kc;
}

export async function probeKubeVersion(config: StackConfig): Promise<KubeVersionProbe> {
  try {
    return kubernetesVersionOf(await byoKubeConfig(config).makeApiClient(k8s.VersionApi).getCode());
  } catch (err) {
    return { error: (err as Error).message.split("\n")[0] ?? String(err) };
  }
}
