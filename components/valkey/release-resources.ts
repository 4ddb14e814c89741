/**
 * What both Valkey components share: their common args, and the resources every release has
 * before its pods (ConfigMap, password Secret when auth is on, headless Service). The one
 * non-pure module here: it registers resources, always as children of the calling component.
 */
import type * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import type { MetricsConfig, ValkeyConfig } from "../../config/types.js";
import type { Placement } from "../shared.js";
import type { ConfigMap, NetworkPolicy, Service } from "./k8s-types.js";
import type { MonitoringParts } from "./monitoring.js";
import { restoreServiceAccount, type RestoreSettings } from "./restore-init.js";
import { buildPasswordSecret } from "./secret.js";

/** Args common to ValkeyReplication and ValkeyCluster. */
export interface ValkeyReleaseArgs {
  /** Namespace the release goes into (must exist). */
  namespace: string;
  /** Resolved `valkey` config section. */
  valkey: ValkeyConfig;
  /** Zones, node selector, tolerations, StorageClass. */
  placement: Placement;
  /** The Valkey password (a Pulumi secret); required when valkey.auth.enabled, ignored otherwise. */
  password: pulumi.Input<string> | undefined;
  /**
   * CIDRs the `direct` checks connector connects from, admitted to 6379 by the NetworkPolicy
   * (`checks.directSourceCidrs`). @default []
   */
  checkSourceCidrs?: string[];
  /** `restore.from`: the members start from a backup (valkey/restore-init.ts). @default undefined (start empty) */
  restore?: RestoreSettings;
  /**
   * Resolved `metrics` section: with `enabled`, an exporter beside every member and Sentinel, scrape
   * annotations and the NetworkPolicy rule admitting `scrapeFrom` (valkey/metrics-pod.ts). @default undefined (none)
   */
  metrics?: MetricsConfig;
}

/** The builders' input from a release's args (replication-manifests.ts and cluster-manifests.ts take the same). */
export function releaseInput(args: ValkeyReleaseArgs, release: string, auth: boolean) {
  const { namespace, valkey, placement, checkSourceCidrs, restore, metrics } = args;
  return { namespace, release, valkey, placement, auth, checkSourceCidrs, restore, metrics };
}

export interface ReleaseBase {
  configMap: ConfigMap;
  headlessService: Service;
  /** Secret name, or undefined for no Secret (auth off). */
  secretName: string | undefined;
}

/**
 * Registers `${name}-config`, `${name}-secret` (when a password is given) and `${name}-headless`
 * under `parent`; returns them, which the StatefulSets depend on.
 */
export function createReleaseBase(
  parent: pulumi.ComponentResource,
  name: string,
  args: { namespace: string; release: string; password: pulumi.Input<string> | undefined },
  m: ReleaseBase,
): pulumi.Resource[] {
  const opts = { parent };
  const created: pulumi.Resource[] = [new k8s.core.v1.ConfigMap(`${name}-config`, m.configMap, opts)];
  if (args.password !== undefined && m.secretName !== undefined) {
    const secret = buildPasswordSecret(m.secretName, args.namespace, args.release, args.password);
    created.push(new k8s.core.v1.Secret(`${name}-secret`, secret, opts));
  }
  created.push(new k8s.core.v1.Service(`${name}-headless`, m.headlessService, opts));
  return created;
}

/**
 * While `restore.from` is set: `${name}-restore-egress` (the members' egress to S3) and, on eks,
 * `${name}-restore-sa` (the members' ServiceAccount, the Pod Identity association's subject);
 * the member StatefulSet depends on them so the fetch does not start before its way out exists.
 */
export function createRestoreResources(
  parent: pulumi.ComponentResource,
  name: string,
  args: { namespace: string; release: string; restore: RestoreSettings | undefined },
  networkPolicy: NetworkPolicy | undefined,
): pulumi.Resource[] {
  if (args.restore === undefined || networkPolicy === undefined) return [];
  const opts = { parent };
  const created: pulumi.Resource[] = [
    new k8s.networking.v1.NetworkPolicy(`${name}-restore-egress`, networkPolicy, opts),
  ];
  const sa = restoreServiceAccount(args.namespace, args.release, args.restore);
  if (sa !== undefined) created.push(new k8s.core.v1.ServiceAccount(`${name}-restore-sa`, sa, opts));
  return created;
}

/**
 * What a release's member StatefulSet depends on, both kinds: createReleaseBase's ConfigMap, Secret and headless
 * Service, then createRestoreResources' egress and ServiceAccount.
 */
export function createMemberDependencies(
  parent: pulumi.ComponentResource,
  name: string,
  args: {
    namespace: string;
    release: string;
    password: pulumi.Input<string> | undefined;
    restore: RestoreSettings | undefined;
  },
  m: ReleaseBase & { restoreNetworkPolicy?: NetworkPolicy },
): pulumi.Resource[] {
  return [
    ...createReleaseBase(parent, name, args, m),
    ...createRestoreResources(parent, name, args, m.restoreNetworkPolicy),
  ];
}

/**
 * Under `parent`: with `metrics.prometheusOperator`, `${name}-podmonitor-<component>` per scraped
 * component and `${name}-alert-rules` (the Operator's CRDs must exist first; nothing here detects
 * them); with `metrics.dashboard.enabled`, the dashboard's ConfigMap `${name}-dashboard`.
 */
export function createMonitoring(parent: pulumi.ComponentResource, name: string, parts: MonitoringParts): void {
  const m = parts.monitoring;
  if (m !== undefined) {
    for (const { component, manifest } of m.podMonitors)
      new k8s.apiextensions.CustomResource(`${name}-podmonitor-${component}`, manifest, { parent });
    new k8s.apiextensions.CustomResource(`${name}-alert-rules`, m.rule, { parent });
  }
  if (parts.dashboard !== undefined) new k8s.core.v1.ConfigMap(`${name}-dashboard`, parts.dashboard, { parent });
}
