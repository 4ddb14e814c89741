/**
 * What a deployed stack costs per hour, and per million ops/s of what it measured. Pure: inputs
 * are plain values (the resolved config's counts, a price table, optional live EC2 prices).
 *
 * Which instance type runs a pod? The NodePool permits several and Karpenter picks at launch
 * time, so this is an estimate, by one stated rule: **the smallest permitted instance type
 * (fewest vCPU, then least memory, then the order the NodePool lists them) whose allocatable
 * capacity (config/instance-types.ts: capacity minus kube-reserved, VM overhead, eviction
 * threshold and DaemonSets) fits the pod's requests, one pod per node**. One Valkey pod per node
 * holds by the StatefulSets' required pod anti-affinity; one benchmark client pod per node is
 * assumed likewise (its requests are sized to take a node's CPU). A stack whose pods pack
 * differently (a bigger type chosen for capacity reasons) costs more than this estimate.
 *
 * With `poolNodes` (what stacks/cost.ts passes) the Valkey and client node counts come from
 * the bin-packing of every pod instead (components/capacity/): Sentinel and HAProxy pods that
 * do not fit beside a Valkey pod add nodes; a client pod that fits beside HAProxy adds none.
 *
 * Counted per hour: the Valkey nodes, the benchmark client nodes (they exist while the benchmark
 * runs, which is when the rps was measured), the system node group, the Valkey volumes and the
 * system nodes' root volumes at the gp3 rate, the EKS control plane and the NAT gateways; per row,
 * data transfer between zones at the row's measured rate (withCostColumns; transfer.ts: the
 * replication streams, the client traffic under the placement `cost.clientZones` assumes, the
 * cluster bus), priced at the table's inter-AZ rate ($0.01/GB in each direction), where it was
 * measured (a mix's MIX row: the pod reads every member's INFO byte counters; valkey-benchmark's
 * rows are not measured, and say so).
 * Not counted: NAT per-GB processing (no benchmark byte goes through a NAT gateway; image pulls
 * and AWS API calls from private subnets do, and are not measured), the client → HAProxy hop of
 * replication mode's write path, Sentinel ↔ Sentinel traffic, gp3 IOPS/throughput above the
 * included baseline, load balancers, CloudWatch, public IPv4 addresses, and the Karpenter
 * controller's share of the system nodes.
 */
import { z } from "zod";
import { allocatableFor } from "../../config/instance-types.js";
import type { ResultRow } from "../run/result-row.js";
import {
  eksControlPlaneHourly,
  gp3PerGiBMonth,
  instanceHourly,
  natGatewayHourly,
  type Lookup,
  type PriceTable,
} from "./prices.js";

export interface PodRequest {
  cpuMillicores: number;
  memoryBytes: number;
}

/** The estimate rule above: the smallest permitted type whose allocatable fits `request`. */
export function estimateInstanceType(permitted: readonly string[], request: PodRequest): string | undefined {
  const fitting = permitted.flatMap((type, index) => {
    const a = allocatableFor(type);
    return a && a.cpuMillicores >= request.cpuMillicores && a.memoryBytes >= request.memoryBytes
      ? [{ type, index, ...a }]
      : [];
  });
  fitting.sort((x, y) => x.cpuMillicores - y.cpuMillicores || x.memoryBytes - y.memoryBytes || x.index - y.index);
  return fitting[0]?.type;
}

export interface CostInputs {
  region: string;
  /** The NodePool's permitted types (config `karpenter.nodePool.permittedInstanceTypes`). */
  permittedInstanceTypes: readonly string[];
  valkeyPods: number;
  valkeyRequest: PodRequest;
  /** PVC size of each Valkey pod, GiB. */
  volumeGiB: number;
  /** Benchmark client pods (0 when the benchmark is off). */
  clientPods: number;
  clientRequest: PodRequest;
  systemNodes: { instanceType: string; count: number; diskSizeGiB: number };
  /**
   * The Valkey pool's nodes by instance type, from the bin-packing of every pod the stack creates
   * (components/capacity/): `release` for the members, Sentinels and HAProxy, `clients` for the
   * extra nodes the benchmark/drill pods need. Absent: one node per Valkey pod and per client pod.
   */
  poolNodes?: { release: string[]; clients: string[] };
  natGateways: number;
  controlPlaneSupport: "standard" | "extended";
  /** Why that rate (control-plane-support.ts), shown in the line's item; absent: not said. */
  controlPlaneBasis?: string;
}

/** Live EC2 on-demand prices by instance type (from the AWS Pricing API). */
export type LivePrices = Readonly<Record<string, number>>;

/** Where a stack's EC2 prices came from. */
export const priceSourceSchema = z.enum(["aws-pricing-api", "table", "aws-pricing-api+table"]);
export type PriceSource = z.infer<typeof priceSourceSchema>;

/** One priced line of a stack's hourly cost. */
export const costLineSchema = z.object({
  item: z.string(),
  quantity: z.number(),
  /** e.g. "node-hour", "GiB-month", "cluster-hour". */
  unit: z.string(),
  unitUsd: z.number().nullable(),
  usdPerHour: z.number().nullable(),
  /** A source id of the table, "aws-pricing-api", or null when missing. */
  source: z.string().nullable(),
  missing: z.string().optional(),
});
export type CostLine = z.infer<typeof costLineSchema>;

/** A stack's estimated on-demand cost per hour, as the stack report carries it. */
export const stackCostSchema = z.object({
  region: z.string(),
  /** Sum of the lines; null when any counted line's price is missing (never a partial sum). */
  usdPerHour: z.number().nullable(),
  /** Where the EC2 prices came from; EBS, NAT and the control plane always come from the table. */
  priceSource: priceSourceSchema,
  /** Why the Pricing API was not used, when it was asked and failed. */
  pricingApiError: z.string().nullable(),
  valkeyInstanceType: z.string().nullable(),
  clientInstanceType: z.string().nullable(),
  lines: z.array(costLineSchema),
  missing: z.array(z.string()),
});
export type StackCost = z.infer<typeof stackCostSchema>;

const round = (n: number, digits: number) => Number(n.toFixed(digits));

/** The lines being priced, and which EC2 price sources they used. */
interface CostSheet {
  inputs: CostInputs;
  table: PriceTable;
  live: LivePrices;
  lines: CostLine[];
  ec2Sources: Set<"live" | "table">;
}

/** The hourly cost of a stack from a table, optional live EC2 prices overriding it. */
export function stackCost(
  inputs: CostInputs,
  table: PriceTable,
  live: LivePrices = {},
  pricingApiError: string | null = null,
): StackCost {
  const sheet: CostSheet = { inputs, table, live, lines: [], ec2Sources: new Set() };
  const { valkeyType, clientType } = estimatedTypes(inputs);
  addPoolNodeLines(sheet, valkeyType, clientType);
  addFixedLines(sheet);
  const { lines } = sheet;
  const missing = lines.flatMap((l) => (l.missing ? [l.missing] : []));
  const total =
    missing.length > 0
      ? null
      : round(
          lines.reduce((sum, l) => sum + (l.usdPerHour ?? 0), 0),
          6,
        );
  return {
    region: inputs.region,
    usdPerHour: total,
    priceSource: priceSourceOf(sheet.ec2Sources),
    pricingApiError,
    valkeyInstanceType: valkeyType ?? null,
    clientInstanceType: clientType ?? null,
    lines,
    missing,
  };
}

/**
 * The Valkey and client pods' instance types: the bin-packing's first, else the estimate rule (no client pods: none).
 */
function estimatedTypes(inputs: CostInputs): { valkeyType: string | undefined; clientType: string | undefined } {
  const pool = inputs.poolNodes;
  const valkeyType = pool ? pool.release[0] : estimateInstanceType(inputs.permittedInstanceTypes, inputs.valkeyRequest);
  const clientType = pool
    ? pool.clients[0]
    : inputs.clientPods > 0
      ? estimateInstanceType(inputs.permittedInstanceTypes, inputs.clientRequest)
      : undefined;
  return { valkeyType, clientType };
}

/** `type`'s hourly price: the live price when there is one, else the table's; records which it used. */
function ec2Price(sheet: CostSheet, type: string): Lookup {
  const usd = sheet.live[type];
  if (usd !== undefined) {
    sheet.ec2Sources.add("live");
    return { usd, source: "aws-pricing-api" };
  }
  sheet.ec2Sources.add("table");
  return instanceHourly(sheet.table, sheet.inputs.region, type);
}

/** Adds one line (none for quantity 0); a missing price makes a line with no figures and the reason. */
function addLine(
  sheet: CostSheet,
  item: string,
  quantity: number,
  unit: string,
  price: Lookup,
  perHour: (unitUsd: number) => number,
): void {
  if (quantity === 0) return;
  sheet.lines.push(
    price.usd === null
      ? { item, quantity, unit, unitUsd: null, usdPerHour: null, source: null, missing: price.missing }
      : { item, quantity, unit, unitUsd: price.usd, usdPerHour: round(perHour(price.usd), 6), source: price.source },
  );
}

function noFit(what: string): Lookup {
  return {
    usd: null,
    missing: `${what}: no permitted instance type fits its requests`,
  };
}

/** One node-hour line per instance type among `types` (undefined: no permitted type fits `pod`). */
function addNodeLines(sheet: CostSheet, what: string, types: Array<string | undefined>, pod: string): void {
  const counts = new Map<string | undefined, number>();
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const [t, n] of counts)
    addLine(sheet, `${what} (${t ?? "none fits"})`, n, "node-hour", t ? ec2Price(sheet, t) : noFit(pod), (u) => u * n);
}

/** The Valkey nodes and the benchmark client nodes (the bin-packing's, else one per pod), then the system nodes. */
function addPoolNodeLines(sheet: CostSheet, valkeyType: string | undefined, clientType: string | undefined): void {
  const { inputs } = sheet;
  const pool = inputs.poolNodes;
  addNodeLines(
    sheet,
    "Valkey nodes",
    pool ? pool.release : Array.from({ length: inputs.valkeyPods }, () => valkeyType),
    "Valkey pod",
  );
  addNodeLines(
    sheet,
    "benchmark client nodes",
    pool ? pool.clients : Array.from({ length: inputs.clientPods }, () => clientType),
    "benchmark pod",
  );
  const sys = inputs.systemNodes;
  addLine(
    sheet,
    `system nodes (${sys.instanceType})`,
    sys.count,
    "node-hour",
    ec2Price(sheet, sys.instanceType),
    (u) => u * sys.count,
  );
}

/** The volumes at the gp3 rate, the EKS control plane and the NAT gateways (always the table's prices). */
function addFixedLines(sheet: CostSheet): void {
  const { inputs, table } = sheet;
  const sys = inputs.systemNodes;
  const gp3 = gp3PerGiBMonth(table, inputs.region);
  const valkeyGiB = inputs.valkeyPods * inputs.volumeGiB;
  addLine(sheet, "Valkey volumes (gp3)", valkeyGiB, "GiB-month", gp3, (u) => (u * valkeyGiB) / table.hoursPerMonth);
  const rootGiB = sys.count * sys.diskSizeGiB;
  addLine(
    sheet,
    "system node root volumes (gp3 rate)",
    rootGiB,
    "GiB-month",
    gp3,
    (u) => (u * rootGiB) / table.hoursPerMonth,
  );
  addLine(
    sheet,
    `EKS control plane (${inputs.controlPlaneSupport} support${inputs.controlPlaneBasis ? `: ${inputs.controlPlaneBasis}` : ""})`,
    1,
    "cluster-hour",
    eksControlPlaneHourly(table, inputs.controlPlaneSupport),
    (u) => u,
  );
  addLine(
    sheet,
    "NAT gateways",
    inputs.natGateways,
    "gateway-hour",
    natGatewayHourly(table, inputs.region),
    (u) => u * inputs.natGateways,
  );
}

/** Where the EC2 prices came from: the Pricing API, the table, or both. */
function priceSourceOf(ec2Sources: ReadonlySet<"live" | "table">): PriceSource {
  return ec2Sources.has("live") ? (ec2Sources.has("table") ? "aws-pricing-api+table" : "aws-pricing-api") : "table";
}

/** USD per hour ÷ (rps ÷ 1e6): what a million ops/s of this measurement costs per hour. */
export function usdPerMillionOpsPerSecond(usdPerHour: number | null, rps: number): number | null {
  if (usdPerHour === null || !(rps > 0)) return null;
  return round(usdPerHour / (rps / 1e6), 4);
}

/**
 * The rows with the two cost columns appended: the stack's hour plus the row's own data transfer
 * per hour where it was measured (`transfer_usd_per_hour`, benchmarks/cost/transfer.ts); a row
 * whose transfer was not measured carries the stack's hour alone (its transfer column is empty).
 */
export function withCostColumns(rows: readonly ResultRow[], usdPerHour: number | null): ResultRow[] {
  return rows.map((r) => {
    const hour =
      usdPerHour === null
        ? null
        : round(usdPerHour + (typeof r.transfer_usd_per_hour === "number" ? r.transfer_usd_per_hour : 0), 6);
    return { ...r, usd_per_hour: hour, usd_per_million_ops_per_s: usdPerMillionOpsPerSecond(hour, r.rps) };
  });
}
