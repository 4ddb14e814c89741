/** The ConfigMap of one release: valkey.conf per role and the scripts. Never holds a secret. */
import { createHash } from "node:crypto";
import { releaseLabels } from "../shared.js";
import type { ConfigMap } from "./k8s-types.js";

export function buildConfigMap(
  name: string,
  namespace: string,
  release: string,
  data: Record<string, string>,
): ConfigMap {
  return { metadata: { name, namespace, labels: releaseLabels(release) }, data: { ...data } };
}

/** A stable hash of ConfigMap data (keys sorted), for the pods' config-hash annotation. */
export function configHash(data: Record<string, string>): string {
  const h = createHash("sha256");
  for (const key of Object.keys(data).sort()) h.update(`${key}\0${data[key]}\0`);
  return h.digest("hex").slice(0, 16);
}
