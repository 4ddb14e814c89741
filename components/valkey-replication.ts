/**
 * ValkeyReplication: Valkey in replication mode with automatic failover, as a thin
 * ComponentResource over the pure builders in components/valkey/: one StatefulSet of equal
 * members (no fixed primary: each asks the Sentinels at start), the Sentinels, HAProxy write
 * and read endpoints that follow the primary, a PDB and a NetworkPolicy each. No RBAC: no pod
 * of the release talks to the Kubernetes API. Every count, name and host is a plain value from
 * the config; the password reaches only Secrets.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { HAPROXY_CFG_KEY, HAPROXY_STATUS_PORT } from "./valkey/haproxy-manifests.js";
import { buildReplicationManifests, type ReplicationPod } from "./valkey/replication-manifests.js";
import {
  createMonitoring,
  createMemberDependencies,
  releaseInput,
  type ValkeyReleaseArgs,
} from "./valkey/release-resources.js";
import { requirePassword } from "./valkey/secret.js";
import type { Rollout } from "./valkey/rollout.js";

export interface ValkeyReplicationArgs extends ValkeyReleaseArgs {
  /** Release name: prefix of every Kubernetes object and the `app.kubernetes.io/instance` label. @default "valkey" */
  release?: string;
}

export const DEFAULT_REPLICATION_RELEASE = "valkey";

export class ValkeyReplication extends pulumi.ComponentResource {
  public readonly namespace: string;
  public readonly release: string;
  /** `<release>-write.<ns>.svc.cluster.local`: HAProxy's write endpoint, always the current primary. */
  public readonly writeHost: string;
  /** `<release>-read.<ns>.svc.cluster.local`: HAProxy's read endpoint, replicas only. */
  public readonly readHost: string;
  /** `<release>-sentinel.<ns>.svc.cluster.local`: the Sentinels, for Sentinel-aware clients. */
  public readonly sentinelHost: string;
  public readonly sentinelPort: number;
  /** The Sentinel master name. */
  public readonly masterName: string;
  /** Secret holding the password; undefined when auth is off. */
  public readonly secretName: string | undefined;
  /** Key of the password in that Secret; undefined when auth is off. */
  public readonly passwordKey: string | undefined;
  /** Labels every data member carries (not the Sentinels or the proxies). */
  public readonly podSelector: Record<string, string>;
  /** Labels every Sentinel pod carries. */
  public readonly sentinelSelector: Record<string, string>;
  /** Labels of the HAProxy pods behind `writeHost` / `readHost` (what a client of the endpoints connects to). */
  public readonly endpointSelector: Record<string, string>;
  /** The HAProxy pods' HTTP status port (`/ready`, `/quorum/<member>`, `/sentinels`). */
  public readonly statusPort = HAPROXY_STATUS_PORT;
  /** Name of the members' headless Service. */
  public readonly headlessService: string;
  /** Name of the Sentinels' headless Service. */
  public readonly sentinelHeadlessService: string;
  /** Every data member by ordinal with its stable DNS name. */
  public readonly pods: ReplicationPod[];
  /** What the RollingRestart step rolls (OnDelete StatefulSets) and the hash of their pod templates. */
  public readonly rollout: Rollout;
  /** Every Sentinel by ordinal with its stable DNS name. */
  public readonly sentinels: ReplicationPod[];
  public readonly port: number;

  constructor(name: string, args: ValkeyReplicationArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:valkey:Replication", name, {}, opts);
    const release = args.release ?? DEFAULT_REPLICATION_RELEASE;
    const password = requirePassword(args.valkey.auth.enabled, args.password, `ValkeyReplication ${name}`);
    const m = buildReplicationManifests(releaseInput(args, release, password !== undefined));
    const parent = { parent: this };
    const deps = createMemberDependencies(
      this,
      name,
      { namespace: args.namespace, release, password, restore: args.restore },
      { ...m, secretName: m.facts.secretName },
    );
    const podDeps = { parent: this, dependsOn: deps };
    new k8s.apps.v1.StatefulSet(`${name}-members`, m.statefulSet, podDeps);
    new k8s.policy.v1.PodDisruptionBudget(`${name}-pdb`, m.pdb, parent);
    new k8s.networking.v1.NetworkPolicy(`${name}-netpol`, m.networkPolicies.members, parent);

    const sentinelHeadless = new k8s.core.v1.Service(`${name}-sentinel-headless`, m.sentinel.headlessService, parent);
    new k8s.core.v1.Service(`${name}-sentinel-svc`, m.sentinel.service, parent);
    new k8s.apps.v1.StatefulSet(`${name}-sentinel`, m.sentinel.statefulSet, {
      parent: this,
      dependsOn: [...deps, sentinelHeadless],
    });
    new k8s.policy.v1.PodDisruptionBudget(`${name}-sentinel-pdb`, m.sentinel.pdb, parent);
    new k8s.networking.v1.NetworkPolicy(`${name}-sentinel-netpol`, m.networkPolicies.sentinels, parent);

    // haproxy.cfg holds the password (its health check logs in): a Secret, its text a Pulumi secret.
    const cfg =
      password === undefined
        ? m.haproxy.renderCfg(undefined)
        : pulumi.secret(pulumi.output(password).apply((p) => m.haproxy.renderCfg(p)));
    const cfgSecret = new k8s.core.v1.Secret(
      `${name}-haproxy-cfg`,
      { metadata: m.haproxySecretMeta, type: "Opaque", stringData: { [HAPROXY_CFG_KEY]: cfg } },
      parent,
    );
    new k8s.apps.v1.Deployment(`${name}-haproxy`, m.haproxy.deployment, { parent: this, dependsOn: [cfgSecret] });
    new k8s.core.v1.Service(`${name}-write-svc`, m.haproxy.writeService, parent);
    new k8s.core.v1.Service(`${name}-read-svc`, m.haproxy.readService, parent);
    new k8s.policy.v1.PodDisruptionBudget(`${name}-haproxy-pdb`, m.haproxy.pdb, parent);
    new k8s.networking.v1.NetworkPolicy(`${name}-haproxy-netpol`, m.networkPolicies.haproxy, parent);
    createMonitoring(this, name, m);

    const f = m.facts;
    this.namespace = args.namespace;
    this.release = release;
    this.writeHost = f.writeHost;
    this.readHost = f.readHost;
    this.sentinelHost = f.sentinelHost;
    this.sentinelPort = f.sentinelPort;
    this.masterName = f.masterName;
    this.secretName = f.secretName;
    this.passwordKey = f.passwordKey;
    this.podSelector = f.podSelector;
    this.sentinelSelector = f.sentinelSelector;
    this.endpointSelector = f.endpointSelector;
    this.headlessService = f.names.headless;
    this.sentinelHeadlessService = f.names.sentinelHeadless;
    this.pods = f.pods;
    this.rollout = m.rollout;
    this.sentinels = f.sentinels;
    this.port = f.port;
    const { names: _names, ...outputs } = f;
    this.registerOutputs({ namespace: this.namespace, release, ...outputs });
  }
}
