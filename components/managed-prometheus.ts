/**
 * ManagedPrometheus (`metrics.amp`, platform eks): an Amazon Managed Service for Prometheus
 * workspace (unless the stack names one), the mode's alert rules in it as a rule groups namespace,
 * a managed collector (`aws.amp.Scraper`) on the EKS cluster running the stack's annotation scrape
 * job, and the collector's read-only ClusterRole bound to the user AMP maps it to. Thin wiring over
 * components/aws/managed-prometheus.ts.
 *
 * Resource options as for the other platform components: the cluster's Kubernetes provider and
 * the AWS provider in `opts.providers`, reaching the children through `{ parent: this }`; the
 * cluster's readiness in `opts.dependsOn` (the collector's source must exist).
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { eksClusterArn, partitionOf } from "./aws/iam.js";
import { ampCollectorRbac, ampScrapeConfiguration, workspaceIdOf } from "./aws/managed-prometheus.js";
import { requireKubernetesProvider } from "./karpenter-node-pool.js";

export interface ManagedPrometheusArgs {
  /** Name of the EKS cluster the collector scrapes (its ARN is built from it and the deploying account). */
  clusterName: string;
  /** The cluster's region. */
  region: string;
  /** Subnets of the collector's network interfaces: the cluster's private subnets (two zones at least). */
  subnetIds: pulumi.Input<pulumi.Input<string>[]>;
  /** Security groups of those interfaces: the cluster security group, which the nodes admit from. */
  securityGroupIds: pulumi.Input<string>[];
  /** Namespaces whose annotated pods are scraped (`valkey.namespace`). */
  namespaces: string[];
  /** The rule file loaded into the workspace (core/metrics/rule-file.ts stackRuleFile). */
  rules: string;
  /** Workspace alias, scraper alias and rule namespace name, e.g. `valkey-<stack>`. */
  alias: string;
  /** An existing workspace (`metrics.amp.workspaceArn`). @default undefined (a new workspace) */
  workspaceArn?: string;
  /** Tags on the AWS resources. @default {} */
  tags?: Record<string, string>;
}

export class ManagedPrometheus extends pulumi.ComponentResource {
  readonly workspaceArn: pulumi.Output<string>;
  readonly workspaceId: pulumi.Output<string>;
  /** The workspace's Prometheus-compatible endpoint (query: `<endpoint>api/v1/query`). */
  readonly prometheusEndpoint: pulumi.Output<string>;
  readonly scraperArn: pulumi.Output<string>;
  /** The IAM role AMP gave the collector (its EKS access entry's principal). */
  readonly scraperRoleArn: pulumi.Output<string>;
  readonly ruleNamespace: pulumi.Output<string>;

  constructor(name: string, args: ManagedPrometheusArgs, opts?: pulumi.ComponentResourceOptions) {
    super("valkey-on-eks:aws:ManagedPrometheus", name, {}, opts);
    requireKubernetesProvider(this, `ManagedPrometheus ${name}`);
    const parent = { parent: this };
    const tags = { ...args.tags };

    // A collector tags its workspace AMPAgentlessScraper; carrying it keeps `up` from removing it.
    const workspace =
      args.workspaceArn === undefined
        ? new aws.amp.Workspace(
            `${name}-workspace`,
            { alias: args.alias, tags: { ...tags, AMPAgentlessScraper: "" } },
            parent,
          )
        : undefined;
    this.workspaceArn = workspace?.arn ?? pulumi.output(args.workspaceArn as string);
    this.workspaceId = workspace?.id ?? pulumi.output(workspaceIdOf(args.workspaceArn as string));
    this.prometheusEndpoint =
      workspace?.prometheusEndpoint ??
      aws.amp.getWorkspaceOutput({ workspaceId: this.workspaceId }, parent).prometheusEndpoint;

    const rules = new aws.amp.RuleGroupNamespace(
      `${name}-rules`,
      { workspaceId: this.workspaceId, name: args.alias, data: args.rules, tags },
      parent,
    );

    const rbac = ampCollectorRbac({ "app.kubernetes.io/managed-by": "valkey-on-eks" });
    const role = new k8s.rbac.v1.ClusterRole(`${name}-collector-role`, rbac.clusterRole, parent);
    const binding = new k8s.rbac.v1.ClusterRoleBinding(`${name}-collector-binding`, rbac.binding, {
      parent: this,
      dependsOn: [role],
    });

    const account = aws.getCallerIdentityOutput({}, parent).accountId;
    const clusterArn = account.apply((a) => eksClusterArn(partitionOf(args.region), args.region, a, args.clusterName));
    const scraper = new aws.amp.Scraper(
      `${name}-scraper`,
      {
        alias: args.alias,
        source: {
          eks: { clusterArn, subnetIds: args.subnetIds, securityGroupIds: args.securityGroupIds },
        },
        destination: { amp: { workspaceArn: this.workspaceArn } },
        scrapeConfiguration: ampScrapeConfiguration(args.namespaces),
        tags,
      },
      { parent: this, dependsOn: [binding] },
    );
    this.scraperArn = scraper.arn;
    this.scraperRoleArn = scraper.roleArn;
    this.ruleNamespace = rules.name;
    this.registerOutputs({
      workspaceArn: this.workspaceArn,
      workspaceId: this.workspaceId,
      prometheusEndpoint: this.prometheusEndpoint,
      scraperArn: this.scraperArn,
      scraperRoleArn: this.scraperRoleArn,
      ruleNamespace: this.ruleNamespace,
    });
  }
}
