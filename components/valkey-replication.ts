/**
 * ValkeyReplication: Valkey in replication mode (one writable primary in the placement's first
 * zone, N read replicas spread over every zone), as a thin ComponentResource over the pure
 * builders in components/valkey/. Every count, name and host is a plain value from the config.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { buildReplicationManifests, type ReplicationPod } from "./valkey/replication-manifests.js";
import { createReleaseBase, type ValkeyReleaseArgs } from "./valkey/release-resources.js";
import { requirePassword } from "./valkey/secret.js";

export interface ValkeyReplicationArgs extends ValkeyReleaseArgs {
  /** Release name: prefix of every Kubernetes object and the `app.kubernetes.io/instance` label. @default "valkey" */
  release?: string;
}

export const DEFAULT_REPLICATION_RELEASE = "valkey";

export class ValkeyReplication extends pulumi.ComponentResource {
  public readonly namespace: string;
  public readonly release: string;
  /** `<release>-primary.<ns>.svc.cluster.local`: the writable endpoint. */
  public readonly primaryHost: string;
  /** `<release>-read.<ns>.svc.cluster.local`: ready replicas only. */
  public readonly readHost: string;
  /** Secret holding the password; undefined when auth is off. */
  public readonly secretName: string | undefined;
  /** Key of the password in that Secret; undefined when auth is off. */
  public readonly passwordKey: string | undefined;
  /** Labels every Valkey pod of the release carries. */
  public readonly podSelector: Record<string, string>;
  public readonly primaryPod: string;
  public readonly replicaPods: string[];
  /** Every pod with its role and stable DNS name, primary first. */
  public readonly pods: ReplicationPod[];
  public readonly port: number;

  constructor(name: string, args: ValkeyReplicationArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:valkey:Replication", name, {}, opts);
    const release = args.release ?? DEFAULT_REPLICATION_RELEASE;
    const password = requirePassword(args.valkey.auth.enabled, args.password, `ValkeyReplication ${name}`);
    const m = buildReplicationManifests({
      namespace: args.namespace,
      release,
      valkey: args.valkey,
      placement: args.placement,
      auth: password !== undefined,
      checkSourceCidrs: args.checkSourceCidrs,
    });
    const parent = { parent: this };
    const deps = createReleaseBase(this, name, { namespace: args.namespace, release, password }, { ...m, secretName: m.facts.secretName });
    new k8s.core.v1.Service(`${name}-primary-svc`, m.primaryService, parent);
    new k8s.core.v1.Service(`${name}-read-svc`, m.readService, parent);
    const podDeps = { parent: this, dependsOn: deps };
    new k8s.apps.v1.StatefulSet(`${name}-primary`, m.primary, podDeps);
    new k8s.apps.v1.StatefulSet(`${name}-replica`, m.replica, podDeps);
    new k8s.policy.v1.PodDisruptionBudget(`${name}-pdb`, m.pdb, parent);
    new k8s.networking.v1.NetworkPolicy(`${name}-netpol`, m.networkPolicy, parent);

    const f = m.facts;
    this.namespace = args.namespace;
    this.release = release;
    this.primaryHost = f.primaryHost;
    this.readHost = f.readHost;
    this.secretName = f.secretName;
    this.passwordKey = f.passwordKey;
    this.podSelector = f.podSelector;
    this.primaryPod = f.primaryPod;
    this.replicaPods = f.replicaPods;
    this.pods = f.pods;
    this.port = f.port;
    const { names: _names, ...outputs } = f;
    this.registerOutputs({ namespace: this.namespace, release, ...outputs });
  }
}
