/**
 * ValkeyCluster: Valkey in cluster mode, one StatefulSet of primaries × (1 + replicasPerPrimary)
 * cluster-enabled members spread hard over the zones, as a thin ComponentResource over the pure
 * builders in components/valkey/. It assigns no slots: the ClusterBootstrap does, AZ-aware,
 * once the pods exist (depend on this component to wait for them). A ClusterShape guard
 * (`${name}-shape`) comes first: a shape change the cluster cannot take fails `pulumi preview`;
 * with `scaleIn` access given, a ClusterScaleIn step (`${name}-scale-in`) then moves the slots
 * off the pods above a lowered shape before the StatefulSet shrinks.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { ClusterShape } from "./steps/cluster-shape/component.js";
import { ClusterScaleIn, type ClusterScaleInArgs } from "./steps/cluster-scale-in/component.js";
import { selectorOf } from "../vocabulary/labels.js";
import { buildClusterManifests } from "./valkey/cluster-manifests.js";
import {
  createMonitoring,
  createMemberDependencies,
  releaseInput,
  type ValkeyReleaseArgs,
} from "./valkey/release-resources.js";
import { requirePassword } from "./valkey/secret.js";
import type { Rollout } from "./valkey/rollout.js";

export interface ValkeyClusterArgs extends ValkeyReleaseArgs {
  /**
   * Release name: prefix of every Kubernetes object and the `app.kubernetes.io/instance` label.
   * @default "valkey-cluster"
   */
  release?: string;
  /**
   * How `pulumi up` reaches the pods to scale the cluster in before the StatefulSet shrinks (a
   * ClusterScaleIn step, `${name}-scale-in`); absent: no such step, and the ClusterShape guard
   * refuses fewer primaries. @default undefined
   */
  scaleIn?: Pick<ClusterScaleInArgs, "kubeconfig" | "context" | "connector" | "timeoutMs" | "memoryHeadroom">;
}

export const DEFAULT_CLUSTER_RELEASE = "valkey-cluster";

export class ValkeyCluster extends pulumi.ComponentResource {
  public readonly namespace: string;
  public readonly release: string;
  /** `<release>.<ns>.svc.cluster.local`: any ready member (a slot-aware client follows redirects). */
  public readonly clientHost: string;
  /** Name of the headless Service; pod DNS is `<pod>.<headlessService>.<ns>.svc.cluster.local`. */
  public readonly headlessService: string;
  /** Secret holding the password; undefined when auth is off. */
  public readonly secretName: string | undefined;
  /** Key of the password in that Secret; undefined when auth is off. */
  public readonly passwordKey: string | undefined;
  /** Labels every member carries. */
  public readonly podSelector: Record<string, string>;
  /** Every member, by ordinal, with its stable DNS name (what it announces as cluster-announce-hostname). */
  public readonly pods: { name: string; dnsName: string }[];
  /** What the RollingRestart step rolls (OnDelete StatefulSets) and the hash of their pod templates. */
  public readonly rollout: Rollout;
  public readonly port: number;
  public readonly busPort: number;

  constructor(name: string, args: ValkeyClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:valkey:Cluster", name, {}, opts);
    const release = args.release ?? DEFAULT_CLUSTER_RELEASE;
    const password = requirePassword(args.valkey.auth.enabled, args.password, `ValkeyCluster ${name}`);
    const m = buildClusterManifests(releaseInput(args, release, password !== undefined));
    const parent = { parent: this };
    const deps = createMemberDependencies(
      this,
      name,
      { namespace: args.namespace, release, password, restore: args.restore },
      { ...m, secretName: m.facts.secretName },
    );
    new k8s.core.v1.Service(`${name}-client`, m.clientService, parent);
    // The StatefulSet waits for the shape guard: a shape it refuses (fewer primaries, another
    // replica count) fails preview, and up before the StatefulSet could delete a pod.
    const { primaries, replicasPerPrimary } = args.valkey.cluster;
    const shape = new ClusterShape(
      `${name}-shape`,
      { primaries, replicasPerPrimary, scaleIn: args.scaleIn !== undefined },
      parent,
    );
    // Lowered primaries: the slots leave the pods above the new shape before the StatefulSet deletes them.
    const scaleIn =
      args.scaleIn === undefined
        ? []
        : [
            new ClusterScaleIn(
              `${name}-scale-in`,
              {
                ...args.scaleIn,
                namespace: args.namespace,
                selector: selectorOf(m.facts.podSelector),
                headlessService: m.facts.headlessService,
                password,
                primaries,
                replicasPerPrimary,
              },
              { parent: this, dependsOn: [shape] },
            ),
          ];
    new k8s.apps.v1.StatefulSet(`${name}-members`, m.statefulSet, {
      parent: this,
      dependsOn: [...deps, shape, ...scaleIn],
    });
    new k8s.policy.v1.PodDisruptionBudget(`${name}-pdb`, m.pdb, parent);
    new k8s.networking.v1.NetworkPolicy(`${name}-netpol`, m.networkPolicy, parent);
    createMonitoring(this, name, m);

    const f = m.facts;
    this.namespace = args.namespace;
    this.release = release;
    this.clientHost = f.clientHost;
    this.headlessService = f.headlessService;
    this.secretName = f.secretName;
    this.passwordKey = f.passwordKey;
    this.podSelector = f.podSelector;
    this.pods = f.pods;
    this.rollout = m.rollout;
    this.port = f.port;
    this.busPort = f.busPort;
    const { names: _names, ...outputs } = f;
    this.registerOutputs({ namespace: this.namespace, release, ...outputs });
  }
}
