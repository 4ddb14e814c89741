/**
 * `metrics.amp` in the whole program under Pulumi mocks (platform eks, stacks/Pulumi.cluster.yaml and
 * Pulumi.replication.yaml): a workspace tagged for its collector, the mode's rule file in a rule
 * groups namespace (the text report.metrics.rules hands over), the managed collector on the
 * cluster's ARN (built from the deploying account), private subnets and cluster security group,
 * writing to the workspace with the stack's annotation scrape job, after the read-only ClusterRole
 * and its binding to `aps-collector-user`; the report names what was created. An existing workspace
 * is looked up and written to, none created. Without the flag: nothing of AMP. The scrape
 * configuration itself through the real promtool: tests/core/scrape-config.test.ts.
 */
import { readFileSync } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  ampEndpoint,
  awsMockInvokes,
  awsMockOutputs,
  installMocks,
  MOCK_ACCOUNT,
  settle,
  valueOf,
} from "../support/pulumi-mocks.js";

const recorder = installMocks({ invokes: awsMockInvokes, outputs: awsMockOutputs });
const { parseStackConfig, rawFromPulumiConfig } = await import("../../config/schema.js");
const { runProgram } = await import("../../stacks/program.js");
const pulumi = await import("@pulumi/pulumi");
const { stackRuleFile } = await import("../../core/metrics/rule-file.js");
const { annotationScrapeJob } = await import("../../core/metrics/scrape-config.js");
const { AMP_COLLECTOR_USER } = await import("../../components/aws/managed-prometheus.js");
beforeEach(() => recorder.reset());

async function deploy(file: string, amp: Record<string, unknown> | undefined) {
  const doc = parseYaml(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  const raw = rawFromPulumiConfig(doc.config).raw as Record<string, Record<string, unknown> | undefined>;
  const { config } = parseStackConfig(amp === undefined ? raw : { ...raw, metrics: { ...raw.metrics, amp } });
  const out = runProgram({ stack: "s", config, password: pulumi.secret("pw-amp-mock"), usePricingApi: false });
  const report = await valueOf(out.report);
  await settle();
  const amps = recorder.resources.filter((r) => r.type.startsWith("aws:amp/"));
  return { config, report, amps };
}

const one = (type: string) => {
  const found = recorder.ofType(type);
  expect(
    found.map((r) => r.name),
    type,
  ).toHaveLength(1);
  return found[0] as (typeof found)[number];
};

describe("metrics.amp in the program (platform eks)", () => {
  it.each(["stacks/Pulumi.cluster.yaml", "stacks/Pulumi.replication.yaml"])(
    "%s: workspace, the mode's rules, the collector on the cluster after its RBAC; the report names them",
    async (file) => {
      const { config, report, amps } = await deploy(file, { enabled: true });
      const clusterName = `valkey-${pulumi.getStack()}`;
      expect(amps.map((r) => r.name).sort()).toEqual(["amp-rules", "amp-scraper", "amp-workspace"]);
      for (const r of amps) expect(r.parent, r.name).toBe("amp");

      const workspace = one("aws:amp/workspace:Workspace");
      expect(workspace.inputs).toMatchObject({ alias: clusterName, tags: { AMPAgentlessScraper: "" } });
      const rules = one("aws:amp/ruleGroupNamespace:RuleGroupNamespace");
      expect(rules.inputs).toMatchObject({ workspaceId: "amp-workspace-id", name: clusterName });
      expect(rules.inputs.data).toBe(stackRuleFile(config.valkey));
      expect(rules.inputs.data).toBe(report.metrics?.rules);

      const scraper = one("aws:amp/scraper:Scraper");
      expect(scraper.inputs.source).toEqual({
        eks: {
          clusterArn: `arn:aws:eks:${config.aws.region}:${MOCK_ACCOUNT}:cluster/${clusterName}`,
          subnetIds: ["subnet-p1", "subnet-p2", "subnet-p3"],
          securityGroupIds: ["sg-cluster"],
        },
      });
      expect(scraper.inputs.destination).toEqual({
        amp: { workspaceArn: `arn:aws:aps:us-west-2:${MOCK_ACCOUNT}:workspace/ws-mock` },
      });
      const scrape = parseYaml(String(scraper.inputs.scrapeConfiguration)) as Record<string, unknown>;
      expect(scrape).toEqual({
        global: { scrape_interval: "15s" },
        scrape_configs: [annotationScrapeJob({ namespaces: [config.valkey.namespace] })],
      });
      expect(scraper.dependencies).toContain("amp-collector-binding");

      const role = one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole");
      const binding = one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding");
      expect([role.parent, binding.parent]).toEqual(["amp", "amp"]);
      const verbs = (role.inputs.rules as Array<{ verbs: string[] }>).flatMap((r) => r.verbs);
      expect(new Set(verbs)).toEqual(new Set(["get", "list", "watch"]));
      expect(binding.inputs.subjects).toEqual([
        { kind: "User", name: AMP_COLLECTOR_USER, apiGroup: "rbac.authorization.k8s.io" },
      ]);
      expect(binding.inputs.roleRef).toMatchObject({ kind: "ClusterRole", name: "aps-collector-role" });

      expect(report.metrics?.scrapeFrom.cidrs).toEqual([config.eks.vpcCidr]);
      expect(report.metrics?.amp).toEqual({
        workspaceArn: `arn:aws:aps:us-west-2:${MOCK_ACCOUNT}:workspace/ws-mock`,
        prometheusEndpoint: ampEndpoint("ws-mock"),
        scraperArn: `arn:aws:aps:us-west-2:${MOCK_ACCOUNT}:scraper/s-mock`,
        scraperRoleArn: `arn:aws:iam::${MOCK_ACCOUNT}:role/aws-service-role/scraper.aps.amazonaws.com/AWSServiceRoleForAmazonPrometheusScraper_mock`,
        ruleNamespace: clusterName,
      });
    },
  );

  it("an existing workspace: looked up, written to and given the rules; none created", async () => {
    const arn = `arn:aws:aps:us-west-2:${MOCK_ACCOUNT}:workspace/ws-0123abcd-4567-89ef-0123-456789abcdef`;
    const { report, amps } = await deploy("stacks/Pulumi.cluster.yaml", { enabled: true, workspaceArn: arn });
    expect(amps.map((r) => r.name).sort()).toEqual(["amp-rules", "amp-scraper"]);
    expect(one("aws:amp/ruleGroupNamespace:RuleGroupNamespace").inputs.workspaceId).toBe(
      "ws-0123abcd-4567-89ef-0123-456789abcdef",
    );
    expect(one("aws:amp/scraper:Scraper").inputs.destination).toEqual({ amp: { workspaceArn: arn } });
    const lookups = recorder.invokes.filter((i) => i.token === "aws:amp/getWorkspace:getWorkspace");
    expect(lookups.map((i) => i.inputs.workspaceId)).toEqual(["ws-0123abcd-4567-89ef-0123-456789abcdef"]);
    expect(report.metrics?.amp?.prometheusEndpoint).toBe(ampEndpoint("ws-0123abcd-4567-89ef-0123-456789abcdef"));
  });

  it("without metrics.amp.enabled: no AMP resource, no collector RBAC, no CIDR admitted, amp null", async () => {
    const { report, amps } = await deploy("stacks/Pulumi.cluster.yaml", undefined);
    expect(amps).toEqual([]);
    expect(recorder.resources.filter((r) => r.type.includes("rbac.authorization.k8s.io")).map((r) => r.name)).toEqual(
      [],
    );
    expect(recorder.invokes.filter((i) => i.token.startsWith("aws:amp/"))).toEqual([]);
    expect(report.metrics?.scrapeFrom.cidrs).toEqual([]);
    expect(report.metrics?.amp).toBeNull();
  });
});
