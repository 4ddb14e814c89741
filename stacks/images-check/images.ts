/**
 * The images a stack's pods pull, read from its configuration once: each reference with the config
 * keys that set it, the versions.env key it is pinned by (when it is the default), what the stack
 * runs from it, and the platform its nodes need. Pure.
 */
import { parseImageReference } from "../../config/fields.js";
import type { StackConfig } from "../../config/types.js";
import { karpenterLaunchesNodes } from "../../components/shared.js";
import { versions, type VersionKey } from "../../versions.js";

/** What a stack runs from an image, which decides what the check runs in it (checks.ts). */
export type ImageRole = "valkey" | "haproxy" | "node" | "exporter" | "aws-cli" | "loadgen";

export interface StackImage {
  role: ImageRole;
  /** The reference as the stack's pods pull it. */
  ref: string;
  /** The config keys that set it (one image may serve several, e.g. drills.image and benchmark.mixImage). */
  keys: string[];
  /** The versions.env key whose value it is, when it is that default. @default undefined (set by the stack) */
  pinKey?: VersionKey;
  /** What the stack runs from it, for the report. */
  uses: string[];
}

const PIN_KEYS: readonly VersionKey[] = [
  "VALKEY_IMAGE",
  "HAPROXY_IMAGE",
  "DRILL_LOAD_IMAGE",
  "AWS_CLI_IMAGE",
  "EXPORTER_IMAGE",
];

function pinKeyOf(ref: string): VersionKey | undefined {
  return PIN_KEYS.find((k) => versions[k] === ref);
}

interface Use {
  role: ImageRole;
  ref: string | undefined;
  key: string;
  use: string;
}

function usesOf(config: StackConfig): Use[] {
  const { valkey, drills, benchmark, backup, metrics } = config;
  const replication = valkey.mode === "replication";
  const mix = benchmark.enabled && benchmark.mix !== undefined;
  return [
    { role: "valkey", ref: valkey.image, key: "valkey.image", use: "valkey-server, valkey-sentinel, valkey-cli" },
    ...(benchmark.enabled && !mix
      ? [
          {
            role: "valkey",
            ref: valkey.image,
            key: "valkey.image",
            use: "the benchmark Job's valkey-benchmark",
          } as const,
        ]
      : []),
    ...(replication
      ? [
          {
            role: "haproxy",
            ref: valkey.replication.haproxyImage,
            key: "valkey.replication.haproxyImage",
            use: "the write/read endpoint",
          } as const,
        ]
      : []),
    ...(drills.enabled
      ? [{ role: "node", ref: drills.image, key: "drills.image", use: "the drill load" } as const]
      : []),
    ...(mix
      ? [
          {
            role: "node",
            ref: benchmark.mixImage,
            key: "benchmark.mixImage",
            use: "the benchmark mix runner",
          } as const,
          { role: "loadgen", ref: benchmark.loadgenImage, key: "benchmark.loadgenImage", use: "vload" } as const,
        ]
      : []),
    ...(backup.enabled
      ? [
          {
            role: "aws-cli",
            ref: backup.awsCliImage,
            key: "backup.awsCliImage",
            use: "backup upload, restore",
          } as const,
        ]
      : []),
    ...(metrics.enabled
      ? [{ role: "exporter", ref: metrics.exporterImage, key: "metrics.exporterImage", use: "redis_exporter" } as const]
      : []),
  ];
}

/** Every image the stack's pods pull, once each, in the order the stack creates them. */
export function stackImages(config: StackConfig): StackImage[] {
  const out: StackImage[] = [];
  for (const u of usesOf(config)) {
    if (u.ref === undefined) continue;
    const seen = out.find((i) => i.ref === u.ref && i.role === u.role);
    if (seen !== undefined) {
      if (!seen.keys.includes(u.key)) seen.keys.push(u.key);
      if (!seen.uses.includes(u.use)) seen.uses.push(u.use);
      continue;
    }
    const pinKey = pinKeyOf(u.ref);
    out.push({ role: u.role, ref: u.ref, keys: [u.key], uses: [u.use], ...(pinKey === undefined ? {} : { pinKey }) });
  }
  return out;
}

/**
 * The platform every image must offer: the NodePool's architecture where Karpenter launches the
 * nodes; undefined on nodes the stack does not choose (byo without a managed NodePool).
 */
export function requiredPlatform(config: StackConfig): string | undefined {
  return karpenterLaunchesNodes(config) ? `linux/${config.karpenter.nodePool.architecture}` : undefined;
}

/** The tag's version (`9.1.2` of `valkey:9.1.2`, `1.45.0` of `:v1.45.0`, `24.1.0` of `:24.1.0-alpine`). */
export function tagVersion(ref: string): string | undefined {
  const tag = parseImageReference(ref)?.tag;
  return tag === undefined ? undefined : /^v?(\d+\.\d+(?:\.\d+)?)/.exec(tag)?.[1];
}
