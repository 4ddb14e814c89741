/**
 * Cost wiring for an EKS stack: the live EC2 prices from the AWS Pricing API (the
 * `aws.pricing.getProduct` invoke, through an explicit provider in us-east-1, the API's
 * endpoint region), falling back to benchmarks/cost/prices.json when the invoke fails (no
 * credentials, no pricing:GetProducts permission, no network). Runs at preview and at up. The
 * arithmetic is benchmarks/cost/cost-model.ts; this file only asks and catches.
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import {
  estimateInstanceType,
  stackCost,
  type CostInputs,
  type LivePrices,
  type StackCost,
} from "../benchmarks/cost/cost-model.js";
import { ec2ProductFilters, onDemandHourlyUsd, PRICING_API_REGIONS } from "../benchmarks/cost/pricing-api.js";
import { loadPriceTable } from "../benchmarks/cost/prices.js";
import { controlPlaneSupportOf, type ControlPlaneSupport } from "../benchmarks/cost/control-plane-support.js";
import type { StackConfig } from "../config/types.js";
import { estimateNodes } from "../components/capacity/estimate.js";
import { karpenterLaunchesNodes } from "../components/shared.js";
import { natGatewayCount } from "../components/aws/vpc.js";
import { stackTransfer } from "../benchmarks/cost/stack-transfer.js";
import { transferRate } from "../benchmarks/cost/transfer-record.js";
import type { ZoneTopology } from "../benchmarks/cost/transfer.js";
import { renderResultsCsv } from "../benchmarks/run/results-csv.js";
import type { BenchmarkPart } from "./outputs.js";

/** Plain cost inputs from the resolved config (EKS platform). */
export function costInputsFromConfig(config: StackConfig, clientPods: number): CostInputs {
  return {
    region: config.aws.region,
    permittedInstanceTypes: config.karpenter.nodePool.permittedInstanceTypes,
    valkeyPods: config.valkey.pods,
    valkeyRequest: config.valkey.resourceAmounts.requests,
    volumeGiB: config.valkey.persistence.sizeBytes / 2 ** 30,
    clientPods,
    clientRequest: config.benchmark.resourceAmounts,
    // Auto Mode has no system node group: its system pool's nodes come with poolNodes.
    systemNodes: { ...config.eks.systemNodes, ...(config.eks.autoMode ? { count: 0 } : {}) },
    poolNodes: poolNodesOf(config),
    natGateways: natGatewayCount(config.network.natGateways, config.aws.zones.length),
    // stackCostOutput asks EKS which support window eks.version is in; until then (and unasked) assumed.
    ...controlPlaneSupportOf(config.eks.version, { error: "not asked (no AWS invoke)" }),
  };
}

/**
 * The pool's nodes (components/capacity/estimate.ts): Karpenter's plan where Karpenter launches them (against real
 * Karpenter, tests/e2e/support/karpenter-decides.ts: equal in every cluster-mode run and in 9 of 12 replication-mode
 * runs, the others 6 and 8 nodes; in replication mode 5 × r7g.large + 2 × r7g.xlarge where the least packing has
 * 6 × r7g.large), else the least packing; Auto Mode's system-pool nodes counted with the release.
 */
export function poolNodesOf(config: StackConfig): NonNullable<CostInputs["poolNodes"]> {
  const { least, karpenter, autoModeSystem } = estimateNodes(config);
  const pool = karpenterLaunchesNodes(config) ? karpenter : least;
  return {
    release: [...pool.nodes, ...autoModeSystem.nodes].filter((n) => n.phase === "release").map((n) => n.type),
    clients: pool.nodes.filter((n) => n.phase !== "release").map((n) => n.type),
  };
}

/** The EC2 instance types whose prices the estimate needs. */
export function typesToPrice(inputs: CostInputs): string[] {
  const types = [
    ...(inputs.poolNodes?.release ?? []),
    ...(inputs.poolNodes?.clients ?? []),
    estimateInstanceType(inputs.permittedInstanceTypes, inputs.valkeyRequest),
    inputs.clientPods > 0 ? estimateInstanceType(inputs.permittedInstanceTypes, inputs.clientRequest) : undefined,
    inputs.systemNodes.instanceType,
  ];
  return [...new Set(types.filter((t): t is string => t !== undefined))];
}

/** An invoke's failure as text; some runtimes reject with an empty Error that carries the cause in a `promise`. */
async function errorText(err: unknown): Promise<string> {
  const own = err instanceof Error ? err.message : String(err);
  if (own.trim() !== "") return own;
  const inner = (err as { promise?: unknown }).promise;
  if (inner instanceof Promise) {
    try {
      await inner;
    } catch (cause) {
      return cause instanceof Error ? cause.message : String(cause);
    }
  }
  return "";
}

/** An invoke's failure on one line, at most `max` characters, never empty. */
async function invokeFailure(err: unknown, max: number): Promise<string> {
  return (await errorText(err)).replace(/\s+/g, " ").trim().slice(0, max) || "the invoke failed without a message";
}

async function askPricingApi(
  region: string,
  types: string[],
  provider: aws.Provider,
): Promise<{ live: LivePrices; error: string | null }> {
  try {
    const entries = await Promise.all(
      types.map(async (type) => {
        const product = await aws.pricing.getProduct(
          { serviceCode: "AmazonEC2", filters: ec2ProductFilters(region, type) },
          { provider },
        );
        return [type, onDemandHourlyUsd(product.result, `${type} in ${region}`)] as const;
      }),
    );
    return { live: Object.fromEntries(entries), error: null };
  } catch (err) {
    return { live: {}, error: await invokeFailure(err, 300) };
  }
}

/** Which control-plane rate `version` bills in `region` (describe-cluster-versions), never throwing. */
async function askSupportWindow(version: string, region: string, provider: aws.Provider): Promise<ControlPlaneSupport> {
  try {
    const r = await aws.eks.getClusterVersions({ clusterVersionsOnlies: [version], region }, { provider });
    return controlPlaneSupportOf(version, r.clusterVersions);
  } catch (err) {
    return controlPlaneSupportOf(version, { error: await invokeFailure(err, 200) });
  }
}

/**
 * The stack's cost as an Output. `providerArgs`: the stack's AWS provider args (credentials);
 * the pricing provider (the one AWS provider besides the stack's, used by these invokes only and
 * by no resource) keeps them and only changes the region. Never fails the deployment: a failed
 * invoke means table prices and `pricingApiError` set. With `eksVersion`, EKS is asked which support window it is in
 * (the control plane's rate; a failed invoke leaves the standard rate, its line saying it was assumed and why).
 */
export function stackCostOutput(
  inputs: CostInputs,
  opts: { usePricingApi: boolean; providerArgs?: aws.ProviderArgs; eksVersion?: string } = { usePricingApi: true },
): pulumi.Output<StackCost> {
  const table = loadPriceTable();
  if (!opts.usePricingApi) return pulumi.output(stackCost(inputs, table));
  // The stack's credentials (profile, assumed role: stacks/preflight.ts awsProviderArgs), the API's region; the
  // support window is asked through it too, for the stack's region (the invoke's own region argument).
  const provider = new aws.Provider("pricing-api", { ...opts.providerArgs, region: PRICING_API_REGIONS[0] });
  const asked = askPricingApi(inputs.region, typesToPrice(inputs), provider);
  const support =
    opts.eksVersion === undefined ? Promise.resolve({}) : askSupportWindow(opts.eksVersion, inputs.region, provider);
  return pulumi.output(
    Promise.all([asked, support]).then(([{ live, error }, s]) => stackCost({ ...inputs, ...s }, table, live, error)),
  );
}

/**
 * The benchmark with its data transfer (benchmarks/cost/stack-transfer.ts): the mix's member bytes,
 * the members' zones from the topology check's report, the clients placed by `cost.clientZones`,
 * priced at the table's inter-AZ rate of `aws.region` (byo: what it would cost on AWS there).
 * Rows are absent while the results are unknown (preview): then nothing is added.
 */
export function withStackTransfer(
  b: BenchmarkPart,
  topology: ZoneTopology | undefined,
  config: StackConfig,
): BenchmarkPart {
  if (b.rows === undefined) return b;
  const { rows, transfer } = stackTransfer({
    mode: config.valkey.mode,
    rows: b.rows,
    mix: b.mix,
    topology,
    zones: config.aws.zones,
    placement: config.cost.clientZones,
    rate: transferRate(loadPriceTable(), config.aws.region),
  });
  return { ...b, rows, csv: renderResultsCsv(rows), transfer };
}
